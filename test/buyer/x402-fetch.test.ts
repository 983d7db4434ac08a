import { test } from 'node:test';
import assert from 'node:assert/strict';
import { privateKeyToAccount } from 'viem/accounts';
import { wrapFetchWithPayment, x402Client, decodePaymentResponseHeader } from '@x402/fetch';
import { listen, testApp } from '../helpers/app.ts';
import { insertSignals } from '../helpers/signals.ts';
import { MOCK_PAY_TO } from '../../src/payments/pay-to.ts';
import { IsocastExactScheme, ISOCAST_NETWORKS, registerIsocast } from '../../packages/isocast-client/src/index.ts';
import { PaymentPayloadV2Schema } from '@x402/core/schemas';

/**
 * A stock x402 client pays a running isocast: `x402Client` with its default spend controls on,
 * isocast's scheme registered for x402 v1 (`base`, `eip155:8453`) and v2 (`eip155:8453`), and
 * `@x402/fetch`'s `wrapFetchWithPayment` doing the 402 round trip for POST /v1/subscribe and
 * inline GET /v1/signals. The 402 carries PAYMENT-REQUIRED, so the stock client takes the v2
 * path: it reads the header, pays with PAYMENT-SIGNATURE and reads PAYMENT-RESPONSE.
 */
const buyer = privateKeyToAccount(`0x${'7c'.repeat(32)}`);

test('@x402/fetch buys through x402 v2 (PAYMENT-SIGNATURE) with IsocastExactScheme, spend controls on', async (t) => {
  const env = testApp(t);
  insertSignals(env.db, 'london', 4);
  const base = await listen(t, env.app.fetch);
  const sent: { path: string; header: string; value: string }[] = [];
  const spy: typeof fetch = async (input, init) => {
    const req = new Request(input, init);
    for (const header of ['payment-signature', 'x-payment']) {
      const value = req.headers.get(header);
      if (value) sent.push({ path: new URL(req.url).pathname, header, value });
    }
    return fetch(req);
  };

  // The snippet the README shows.
  const client = new x402Client();
  registerIsocast(client, new IsocastExactScheme(buyer, { payTo: MOCK_PAY_TO, now: () => env.clock.now() }));
  const payFetch = wrapFetchWithPayment(spy, client);

  const sub = await payFetch(`${base}/v1/subscribe?city=nyc&count=20`, { method: 'POST' });
  const subBody = (await sub.json()) as Record<string, any>;
  assert.equal(sub.status, 200, JSON.stringify(subBody));
  assert.deepEqual(
    [subBody.ok, subBody.city, subBody.count, subBody.amountUsd, subBody.paidThroughSeq, subBody.idempotent],
    [true, 'nyc', 20, 0.1, 20, false],
  );
  const settled = decodePaymentResponseHeader(sub.headers.get('payment-response')!);
  assert.equal(settled.success, true);
  assert.equal(settled.payer?.toLowerCase(), buyer.address.toLowerCase());
  assert.equal(settled.transaction, subBody.txHash);
  assert.equal(settled.network, 'eip155:8453');

  // What the stock client sent: a v2 PaymentPayload whose `accepted` echoes the binding.
  assert.equal(sent[0]?.header, 'payment-signature');
  const payload = JSON.parse(Buffer.from(sent[0]!.value, 'base64').toString());
  assert.ok(PaymentPayloadV2Schema.safeParse(payload).success);
  assert.equal(payload.x402Version, 2);
  assert.match(payload.accepted.extra.binding.salt, /^0x[0-9a-f]{64}$/);
  assert.equal(payload.payload.salt, undefined, 'no field of our own: accepted carries the salt');
  assert.equal(payload.resource.url, `http://127.0.0.1:8402/v1/subscribe?city=nyc&count=20`);

  const inline = await payFetch(`${base}/v1/signals?city=london&count=20`);
  const page = (await inline.json()) as Record<string, any>;
  assert.equal(inline.status, 200, JSON.stringify(page));
  assert.deepEqual(
    page.signals.map((s: any) => s.seq),
    [1, 2, 3, 4],
  );
  assert.equal(page.paid_through, 24);
  assert.match(inline.headers.get('x-receipt-token') ?? '', /^isr_/);
  assert.ok(inline.headers.get('payment-response'));
  const rows = env.db
    .prepare('SELECT city, paid_through_seq AS p FROM entitlements WHERE lower(wallet) = lower(?) ORDER BY city')
    .all(buyer.address);
  assert.deepEqual(rows, [
    { city: 'london', p: 24 },
    { city: 'nyc', p: 20 },
  ]);

  // The same bundle again right away: a new 402, a new salt, a second ceiling step.
  const again = await payFetch(`${base}/v1/subscribe?city=nyc&count=20`, { method: 'POST' });
  const againBody = (await again.json()) as Record<string, any>;
  assert.deepEqual([again.status, againBody.paidThroughSeq, againBody.idempotent], [200, 40, false]);

  // The stock spend controls stay in charge: a $2.00 bundle is over the default $1 cap and no
  // payment header leaves the client.
  await assert.rejects(
    payFetch(`${base}/v1/subscribe?city=nyc&count=500`, { method: 'POST' }),
    /spendControls\.maxAmountPerPayment/,
  );
  assert.deepEqual(
    sent.map((s) => `${s.header} ${s.path}`),
    ['payment-signature /v1/subscribe', 'payment-signature /v1/signals', 'payment-signature /v1/subscribe'],
  );

  // Registered for v1 only, the stock client still reads the v2 header first and gives up.
  const v1Only = new x402Client();
  for (const network of ISOCAST_NETWORKS) v1Only.registerV1(network, new IsocastExactScheme(buyer));
  await assert.rejects(
    wrapFetchWithPayment(fetch, v1Only)(`${base}/v1/subscribe?city=nyc&count=20`, { method: 'POST' }),
    /No client registered for x402 version: 2/,
  );

  t.diagnostic(
    `POST /v1/subscribe?city=nyc&count=20 -> ${sub.status} ${JSON.stringify({ ...subBody, receiptToken: '<redacted>', disclaimer: undefined })}`,
  );
  t.diagnostic(`PAYMENT-RESPONSE ${JSON.stringify(settled)}`);
  t.diagnostic(
    `GET /v1/signals?city=london&count=20 -> ${inline.status} seqs ${page.signals.map((s: any) => s.seq).join(',')} paid_through ${page.paid_through} latest ${page.latest} more ${page.more}; X-Receipt-Token present`,
  );
  t.diagnostic(
    `POST /v1/subscribe?city=nyc&count=20 again -> ${again.status} paidThroughSeq ${againBody.paidThroughSeq}`,
  );
  t.diagnostic(
    'POST /v1/subscribe?city=nyc&count=500 ($2.00) -> refused by the stock spend controls (default $1 cap), no payment header sent',
  );
});

test('the scheme echoes the salt when the challenge asks (saltEcho), and pays a challenge that names the network "base"', async (t) => {
  const { startFakeIsocast, FAKE_PAY_TO } = await import('./fake-isocast.ts');
  const fake = await startFakeIsocast(t, {
    saltEcho: true,
    challenge: (b) => {
      b.accepts[0].network = 'base';
    },
  });
  const client = new x402Client();
  for (const network of ISOCAST_NETWORKS)
    client.registerV1(network, new IsocastExactScheme(buyer, { payTo: FAKE_PAY_TO }));
  const res = await wrapFetchWithPayment(fetch, client)(`${fake.url}/v1/subscribe?city=nyc&count=20`, {
    method: 'POST',
  });
  assert.equal(res.status, 200, await res.clone().text());
  const sent = JSON.parse(Buffer.from(fake.xPayments[0]!, 'base64').toString());
  assert.deepEqual([sent.x402Version, sent.scheme, sent.network], [1, 'exact', 'base']);
  assert.match(sent.payload.salt, /^0x[0-9a-f]{64}$/);

  // A hostile challenge is refused inside the scheme, before anything is sent.
  const hostile = await startFakeIsocast(t, {
    challenge: (b) => {
      b.accepts[0].maxAmountRequired = '900000';
    },
  });
  const c2 = new x402Client();
  for (const network of ISOCAST_NETWORKS) c2.registerV1(network, new IsocastExactScheme(buyer));
  await assert.rejects(
    wrapFetchWithPayment(fetch, c2)(`${hostile.url}/v1/subscribe?city=nyc&count=20`, { method: 'POST' }),
    /asks for 0\.9 USDC/,
  );
  assert.equal(hostile.xPayments.length, 0);
});
