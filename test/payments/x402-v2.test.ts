import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Hex } from 'viem';
import { PaymentPayloadV2Schema, PaymentRequiredV2Schema } from '@x402/core/schemas';
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from '@x402/core/http';
import { testApp } from '../helpers/app.ts';
import { insertSignals } from '../helpers/signals.ts';
import { PAYMENT_ERRORS } from '../../src/lib/api-errors.ts';
import { payFor402 } from '../../packages/isocast-client/src/index.ts';
import { listingFor } from '../../src/payments/bazaar.ts';
import { buyerA, buyerB, inApp, type Fetcher } from './buy.ts';

/**
 * Issue 24 item 4, server side: every 402 also carries the x402 v2 `PAYMENT-REQUIRED` header
 * (checked with @x402/core's own schema and decoder), `PAYMENT-SIGNATURE` pays like `X-Payment`
 * (its `accepted` echoes the binding salt), and a settlement answers both response headers.
 */
async function setup(t: Parameters<typeof testApp>[0], env: Record<string, string> = {}) {
  const e = testApp(t, { env });
  return { ...e, f: inApp(e.app) };
}

/** The v2 requirements of a 402, checked against @x402/core's PaymentRequired v2 schema. */
function v2Of(res: Response) {
  const header = res.headers.get('PAYMENT-REQUIRED');
  assert.ok(header, `no PAYMENT-REQUIRED on ${res.url}`);
  const decoded = decodePaymentRequiredHeader(header);
  const parsed = PaymentRequiredV2Schema.safeParse(decoded);
  assert.ok(parsed.success, JSON.stringify(parsed.error?.issues));
  assert.equal(res.headers.get('cache-control'), 'no-store');
  return decoded as any;
}

/** A v2 PaymentPayload the way @x402/core's client builds it: the scheme's payload plus `accepted`. */
async function paymentSignature(f: Fetcher, path: string, init: RequestInit, account = buyerA, nowMs = Date.now()) {
  const res = await f(path, init);
  assert.equal(res.status, 402);
  const required = v2Of(res);
  const body = (await res.json()) as any;
  // The v1 buyer signs (same binding, same amount); the payload goes out the v2 way.
  const p = await payFor402(body, account, { nowMs });
  const v1 = JSON.parse(Buffer.from(p.xPayment, 'base64').toString());
  const { salt: _echo, ...payload } = v1.payload;
  const v2 = { x402Version: 2, resource: required.resource, accepted: required.accepts[0], payload };
  assert.ok(PaymentPayloadV2Schema.safeParse(v2).success);
  return { header: Buffer.from(JSON.stringify(v2)).toString('base64'), required, body, v2 };
}

test('every 402 carries PAYMENT-REQUIRED (x402 v2) beside the unchanged v1 body', async (t) => {
  const { f, db, clock } = await setup(t);
  insertSignals(db, 'nyc', 3);
  const sub = await f('/v1/subscribe?city=nyc&count=20', { method: 'POST' });
  const v2 = v2Of(sub);
  const body = (await sub.json()) as any;
  const a = body.accepts[0]!;
  assert.deepEqual(Object.keys(body).sort(), ['accepts', 'disclaimer', 'error', 'extra', 'terms', 'x402Version']);
  assert.equal(body.x402Version, 1);
  // Issue 28: the route's listing description (the v1 body keeps the bundle's line) and the
  // extensions (bazaar.test.ts and payment-identifier.test.ts check them).
  assert.deepEqual(Object.keys(v2.extensions).sort(), ['bazaar', 'payment-identifier']);
  const { extensions: _ext, ...rest } = v2;
  assert.deepEqual(rest, {
    x402Version: 2,
    error: body.error,
    resource: {
      url: a.resource,
      description: listingFor(a.resource, body.terms)!.description,
      mimeType: 'application/json',
    },
    accepts: [
      {
        scheme: 'exact',
        network: 'eip155:8453',
        amount: a.maxAmountRequired,
        asset: a.asset,
        payTo: a.payTo,
        maxTimeoutSeconds: a.maxTimeoutSeconds,
        extra: a.extra,
      },
    ],
  });
  assert.equal(v2.accepts[0]!.extra.binding.salt, body.extra.binding.salt);
  assert.deepEqual([v2.accepts[0]!.extra.name, v2.accepts[0]!.extra.version], ['USD Coin', '2']);

  // The paid read: no credential, an unknown bearer, and exhaustion.
  const read = await f('/v1/signals?city=nyc');
  assert.equal(read.status, 402);
  assert.equal(v2Of(read).resource.url, 'http://127.0.0.1:8402/v1/signals?city=nyc&count=20');
  const unknown = await f('/v1/signals?city=nyc', { headers: { authorization: 'Bearer isr_nope_nope' } });
  assert.equal(v2Of(unknown).error, 'receipt token not recognised; pay to continue');
  const paid = await payFor402(body, buyerA, { nowMs: clock.now() });
  const bought = (await (
    await f('/v1/subscribe?city=nyc&count=20', { method: 'POST', headers: { 'x-payment': paid.xPayment } })
  ).json()) as any;
  const exhausted = await f('/v1/signals?city=nyc&since=23', {
    headers: { authorization: `Bearer ${bought.receiptToken}` },
  });
  assert.equal(exhausted.status, 402);
  assert.equal(v2Of(exhausted).error, 'paid signals exhausted; buy more to continue');
  assert.equal(((await exhausted.json()) as any).paid_through, 23);
  // An inline purchase refused before settling because it would buy nothing readable.
  const early = await paymentSignature(f, '/v1/signals?city=nyc&count=2', {}, buyerB, clock.now());
  const nothing = await f('/v1/signals?city=nyc&count=2&since=9', { headers: { 'payment-signature': early.header } });
  assert.equal(nothing.status, 402);
  assert.equal(v2Of(nothing).error, 'paid signals exhausted; buy more to continue');
});

test('PAYMENT-SIGNATURE pays: accepted echoes the salt, both response headers answer, a replay is idempotent', async (t) => {
  const { f, db, clock } = await setup(t);
  insertSignals(db, 'nyc', 4);
  const path = '/v1/subscribe?city=nyc&count=20';
  const { header } = await paymentSignature(f, path, { method: 'POST' }, buyerA, clock.now());
  const res = await f(path, { method: 'POST', headers: { 'PAYMENT-SIGNATURE': header } });
  const body = (await res.json()) as any;
  assert.equal(res.status, 200, JSON.stringify(body));
  assert.deepEqual([body.paidThroughSeq, body.idempotent], [24, false]);
  const v2 = decodePaymentResponseHeader(res.headers.get('PAYMENT-RESPONSE')!);
  assert.equal(res.headers.get('PAYMENT-RESPONSE'), res.headers.get('X-PAYMENT-RESPONSE'));
  assert.deepEqual(v2, {
    success: true,
    transaction: body.txHash,
    network: 'eip155:8453',
    payer: buyerA.address.toLowerCase(),
  });
  const replay = await f(path, { method: 'POST', headers: { 'PAYMENT-SIGNATURE': header } });
  assert.equal(((await replay.json()) as any).idempotent, true);
  assert.equal(db.prepare('SELECT count(*) FROM payments').pluck().get(), 1);

  // The inline read pays the same way.
  const inline = await paymentSignature(f, '/v1/signals?city=nyc&count=2', {}, buyerB, clock.now());
  const page = await f('/v1/signals?city=nyc&count=2', { headers: { 'payment-signature': inline.header } });
  assert.equal(page.status, 200);
  assert.equal(((await page.json()) as any).paid_through, 6);
  assert.ok(page.headers.get('payment-response') && page.headers.get('x-payment-response'));
  assert.match(page.headers.get('x-receipt-token') ?? '', /^isr_/);
});

test('PAYMENT-SIGNATURE refusals: not v2, no accepted, a salt never served (V2_NONCE=bound), HEAD; one of each header is refused whole', async (t) => {
  // V2_NONCE=bound keeps the seed's binding on v2: an echoed salt never served is refused.
  const { f, db, clock } = await setup(t, { V2_NONCE: 'bound' });
  const path = '/v1/subscribe?city=nyc&count=2';
  const send = async (headers: Record<string, string>, method = 'POST') => {
    const res = await f(path, { method, headers });
    return { status: res.status, body: method === 'HEAD' ? null : ((await res.json()) as any) };
  };
  const good = await paymentSignature(f, path, { method: 'POST' }, buyerA, clock.now());
  const edit = (change: (j: any) => void) => {
    const j = structuredClone(good.v2);
    change(j);
    return Buffer.from(JSON.stringify(j)).toString('base64');
  };
  for (const [header, reason] of [
    ['%%%', /not base64-encoded JSON/],
    [edit((j) => (j.x402Version = 1)), /x402Version/],
    [edit((j) => delete j.accepted), /accepted/],
    [edit((j) => (j.accepted.network = 'eip155:1')), /network must be eip155:8453/],
  ] as const) {
    const r = await send({ 'payment-signature': header });
    assert.deepEqual([r.status, r.body.error], [402, PAYMENT_ERRORS.verify]);
    assert.match(r.body.reason, reason);
  }
  const forged = await send({
    'payment-signature': edit((j) => (j.accepted.extra.binding.salt = `0x${'11'.repeat(32)}` as Hex)),
  });
  assert.deepEqual([forged.status, forged.body.error], [402, PAYMENT_ERRORS.binding]);
  const head = await f('/v1/signals?city=nyc&count=2', {
    method: 'HEAD',
    headers: { 'payment-signature': good.header },
  });
  assert.equal(head.status, 402, 'HEAD never moves money');
  assert.equal(db.prepare('SELECT count(*) FROM payments').pluck().get(), 0);

  // Both headers: two payments, refused whole before either is read (a proxy might read the other).
  const both = await send({ 'x-payment': 'bm90IGpzb24=', 'payment-signature': good.header });
  assert.deepEqual(
    [both.status, both.body.error],
    [400, 'send exactly one X-Payment or PAYMENT-SIGNATURE header (two were sent)'],
  );
  assert.equal((await send({ 'payment-signature': good.header })).status, 200);
});

test('CORS: a browser may send PAYMENT-SIGNATURE and read PAYMENT-REQUIRED and PAYMENT-RESPONSE', async (t) => {
  const { f } = await setup(t);
  const pre = await f('/v1/subscribe?city=nyc&count=2', {
    method: 'OPTIONS',
    headers: {
      origin: 'https://agent.example',
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'payment-signature,access-control-expose-headers',
    },
  });
  const allowed = (pre.headers.get('access-control-allow-headers') ?? '').toLowerCase();
  for (const h of ['payment-signature', 'access-control-expose-headers', 'x-payment'])
    assert.ok(allowed.includes(h), h);
  const res = await f('/v1/subscribe?city=nyc&count=2', {
    method: 'POST',
    headers: { origin: 'https://agent.example' },
  });
  const exposed = (res.headers.get('access-control-expose-headers') ?? '').toLowerCase();
  for (const h of ['payment-required', 'payment-response', 'x-payment-response']) assert.ok(exposed.includes(h), h);
});
