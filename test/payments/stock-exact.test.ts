import { test } from 'node:test';
import assert from 'node:assert/strict';
import { privateKeyToAccount } from 'viem/accounts';
import type { Account, Hex } from 'viem';
import { x402Client } from '@x402/core/client';
import { x402HTTPClient, decodePaymentRequiredHeader, decodePaymentResponseHeader } from '@x402/core/http';
import { PaymentRequiredV2Schema } from '@x402/core/schemas';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { testApp } from '../helpers/app.ts';
import { insertSignals } from '../helpers/signals.ts';
import { PAYMENT_ERRORS } from '../../src/lib/api-errors.ts';
import type { Settler } from '../../src/payments/settlers/settler.ts';
import { createMockSettler } from '../../src/payments/settlers/mock.ts';
import { inApp, signFor, subscribeWith, tamper, type Fetcher } from './buy.ts';

/**
 * Issue 36 items 1 and 2: the standard x402 v2 `exact` scheme (@x402/evm's own client, a random
 * 32-byte nonce, nothing of ours registered) pays on PAYMENT-SIGNATURE, bound to its bundle the
 * first time it is seen; and every 402 that refuses a payment says so the way x402 clients read
 * it (a fresh PAYMENT-REQUIRED, on v2 a PAYMENT-RESPONSE with success: false, and in the v1 body
 * x402Version and accepts beside the spec's fields).
 */
const payer = privateKeyToAccount(`0x${'3d'.repeat(32)}` as Hex);

async function setup(t: Parameters<typeof testApp>[0], opts: { env?: Record<string, string>; settler?: Settler } = {}) {
  // The stock client signs with the real clock: the server's starts there too.
  const e = testApp(t, { nowMs: Date.now(), env: opts.env, deps: opts.settler ? { settler: opts.settler } : {} });
  insertSignals(e.db, 'nyc', 5);
  insertSignals(e.db, 'london', 5);
  return { ...e, f: inApp(e.app) };
}

/** A PAYMENT-SIGNATURE the way @x402/core's README builds one from a 402 (ExactEvmScheme, random nonce). */
async function stockSignature(f: Fetcher, path: string, init: RequestInit = {}, account: Account = payer) {
  const http = new x402HTTPClient(new x402Client().register('eip155:*', new ExactEvmScheme(account as never)));
  const res = await f(path, init);
  assert.equal(res.status, 402);
  const required = http.getPaymentRequiredResponse((n) => res.headers.get(n), await res.json());
  const payload = await http.createPaymentPayload(required);
  return { header: http.encodePaymentSignatureHeader(payload)['PAYMENT-SIGNATURE']!, payload: payload as any };
}

const send = async (f: Fetcher, path: string, headers: Record<string, string>) => {
  const res = await f(path, { method: path.startsWith('/v1/subscribe') ? 'POST' : 'GET', headers });
  return { status: res.status, body: (await res.json()) as any, res };
};

const entitlements = (e: { db: any }) =>
  e.db.prepare('SELECT city, paid_through_seq AS p FROM entitlements ORDER BY city').all();
const payments = (e: { db: any }) => e.db.prepare('SELECT count(*) FROM payments').pluck().get();

/** The refusal a client reads: PAYMENT-REQUIRED (checked with @x402/core), and on v2 PAYMENT-RESPONSE. */
function refusal(res: Response, v2: boolean) {
  const required = res.headers.get('payment-required');
  assert.ok(required, 'a refusal carries a fresh PAYMENT-REQUIRED');
  const offer = decodePaymentRequiredHeader(required);
  assert.ok(PaymentRequiredV2Schema.safeParse(offer).success);
  const response = res.headers.get('payment-response');
  if (!v2) assert.equal(response, null, 'a v1 payment gets no v2 PAYMENT-RESPONSE');
  return { offer: offer as any, response: response ? (decodePaymentResponseHeader(response) as any) : null };
}

test('a random nonce (@x402/evm ExactEvmScheme) buys on POST /v1/subscribe; again: idempotent; another bundle of the same price: refused, never a second credit', async (t) => {
  const e = await setup(t);
  const nyc = '/v1/subscribe?city=nyc&count=20';
  const { header, payload } = await stockSignature(e.f, nyc, { method: 'POST' });
  assert.match(payload.payload.authorization.nonce, /^0x[0-9a-f]{64}$/);
  const bought = await send(e.f, nyc, { 'payment-signature': header });
  assert.equal(bought.status, 200, JSON.stringify(bought.body));
  assert.deepEqual([bought.body.paidThroughSeq, bought.body.idempotent], [25, false]);
  assert.match(bought.body.receiptToken, /^isr_/);

  const again = await send(e.f, nyc, { 'payment-signature': header });
  assert.deepEqual([again.status, again.body.idempotent, again.body.receiptToken], [200, true, undefined]);

  // Another city at the same price: the authorization is bound to nyc, 20.
  for (const path of ['/v1/subscribe?city=london&count=20', '/v1/signals?city=london&count=20']) {
    const other = await send(e.f, path, { 'payment-signature': header });
    assert.deepEqual([other.status, other.body.error], [402, PAYMENT_ERRORS.binding], path);
    assert.match(other.body.reason, /already paid for another bundle/);
    const { response } = refusal(other.res, true);
    assert.deepEqual(
      [response.success, response.errorReason, response.network, response.payer?.toLowerCase()],
      [false, 'binding_mismatch', 'eip155:8453', payer.address.toLowerCase()],
    );
    assert.equal(other.body.signals, undefined);
  }
  // The same bundle on the inline read: the payment stands, no rows, no token.
  const inline = await send(e.f, '/v1/signals?city=nyc&count=20', { 'payment-signature': header });
  assert.deepEqual([inline.status, inline.body.idempotent, inline.body.signals], [402, true, undefined]);
  assert.equal(inline.res.headers.get('x-receipt-token'), null);
  assert.deepEqual(entitlements(e), [{ city: 'nyc', p: 25 }]);
  assert.equal(payments(e), 1);
});

test('a random nonce reads inline once; the settled header again (public once on chain) reads nothing, here or elsewhere', async (t) => {
  const e = await setup(t);
  const path = '/v1/signals?city=london&count=20';
  const { header } = await stockSignature(e.f, path);
  const paid = await send(e.f, path, { 'payment-signature': header });
  assert.equal(paid.status, 200, JSON.stringify(paid.body));
  assert.deepEqual(
    paid.body.signals.map((s: any) => s.seq),
    [1, 2, 3, 4, 5],
  );
  for (const p of [path, '/v1/subscribe?city=london&count=20', '/v1/signals?city=nyc&count=20']) {
    const replay = await send(e.f, p, { 'payment-signature': header });
    assert.equal(replay.body.signals, undefined, p);
    assert.equal(replay.body.receiptToken, undefined, p);
    assert.equal(replay.res.headers.get('x-receipt-token'), null, p);
  }
  assert.deepEqual(entitlements(e), [{ city: 'london', p: 25 }]);
});

test('one authorization sent to two bundles at once: one credit, the other refused', async (t) => {
  const e = await setup(t);
  const { header } = await stockSignature(e.f, '/v1/subscribe?city=nyc&count=20', { method: 'POST' });
  const paths = ['/v1/subscribe?city=nyc&count=20', '/v1/subscribe?city=london&count=20'];
  const results = await Promise.all([...paths, ...paths].map((p) => send(e.f, p, { 'payment-signature': header })));
  const credited = results.filter((r) => r.status === 200 && r.body.idempotent === false);
  assert.equal(credited.length, 1, JSON.stringify(results.map((r) => [r.status, r.body.error])));
  for (const r of results.filter((r) => r.status !== 200)) assert.equal(r.body.error, PAYMENT_ERRORS.binding);
  assert.equal(payments(e), 1);
  assert.equal(entitlements(e).length, 1);
});

test('accepted must be a requirement this request offers; V2_NONCE=bound and X-Payment keep the binding', async (t) => {
  const e = await setup(t);
  const path = '/v1/subscribe?city=nyc&count=20';
  const { header } = await stockSignature(e.f, path, { method: 'POST' });
  for (const [edit, reason] of [
    [(j: any) => (j.accepted.amount = '1'), /accepted\.amount must be 100000/],
    [(j: any) => (j.accepted.payTo = `0x${'12'.repeat(20)}`), /accepted\.payTo/],
    [(j: any) => (j.accepted.asset = `0x${'34'.repeat(20)}`), /accepted\.asset/],
    [(j: any) => (j.accepted.network = 'base'), /accepted\.network must be eip155:8453/],
  ] as const) {
    const r = await send(e.f, path, { 'payment-signature': tamper(header, edit) });
    assert.deepEqual([r.status, r.body.error], [402, PAYMENT_ERRORS.verify]);
    assert.match(r.body.reason, reason);
    assert.equal(refusal(r.res, true).response.errorReason, 'payment_verification_failed');
  }
  assert.equal(payments(e), 0);

  // v1: the same valid signature with its random nonce as an X-Payment is refused (spec 5).
  const { payload } = await stockSignature(e.f, path, { method: 'POST' });
  const v1 = { x402Version: 1, scheme: 'exact', network: 'eip155:8453', payload: payload.payload };
  const r1 = await subscribeWith(e.f, Buffer.from(JSON.stringify(v1)).toString('base64'), 'nyc', 20);
  assert.deepEqual([r1.status, r1.body.error, r1.body.x402Version], [402, PAYMENT_ERRORS.binding, 1]);
  assert.equal(r1.body.reason, undefined, 'the spec body: no reason');
  assert.equal(payments(e), 0);

  const bound = await setup(t, { env: { V2_NONCE: 'bound' } });
  const b = await stockSignature(bound.f, path, { method: 'POST' });
  const refused = await send(bound.f, path, { 'payment-signature': b.header });
  assert.deepEqual([refused.status, refused.body.error], [402, PAYMENT_ERRORS.binding]);
  assert.equal(refusal(refused.res, true).response.errorReason, 'binding_mismatch');
  assert.equal(payments(bound), 0);
});

test('refusals clients can read: v1 body keeps the spec fields and adds x402Version and accepts; settlement refused and exhaustion carry both headers', async (t) => {
  const failing: Settler = {
    ...createMockSettler(),
    settle: async () => ({ ok: false, inDoubt: false, reason: 'insufficient funds' }),
  };
  const e = await setup(t, { settler: failing });
  const path = '/v1/subscribe?city=nyc&count=20';

  // v1: a signature that does not verify.
  const v1 = await signFor(e.f, payer, 'nyc', 20, e.clock.now());
  const broken = tamper(v1.xPayment, (j) => (j.payload.signature = `0x${'00'.repeat(65)}`));
  const r1 = await subscribeWith(e.f, broken, 'nyc', 20);
  assert.deepEqual([r1.status, r1.body.error, r1.body.x402Version], [402, PAYMENT_ERRORS.verify, 1]);
  assert.equal(typeof r1.body.reason, 'string');
  assert.equal(r1.body.accepts[0].maxAmountRequired, '100000');
  assert.match(r1.body.accepts[0].extra.binding.salt, /^0x[0-9a-f]{64}$/);
  assert.equal(refusal(r1.res, false).offer.accepts[0].amount, '100000');

  // v1 settlement refused: the spec's body, the offer beside it.
  const r2 = await subscribeWith(e.f, v1.xPayment, 'nyc', 20);
  assert.deepEqual([r2.status, r2.body.error, r2.body.reason], [402, PAYMENT_ERRORS.settle, 'insufficient funds']);
  assert.deepEqual([r2.body.x402Version, r2.body.accepts.length], [1, 1]);
  refusal(r2.res, false);

  // v2 settlement refused.
  const { header } = await stockSignature(e.f, path, { method: 'POST' });
  const r3 = await send(e.f, path, { 'payment-signature': header });
  assert.deepEqual([r3.status, r3.body.error], [402, PAYMENT_ERRORS.settle]);
  const { response, offer } = refusal(r3.res, true);
  assert.deepEqual(
    { ...response, payer: response.payer.toLowerCase() },
    {
      success: false,
      errorReason: 'settlement_failed',
      errorMessage: `${PAYMENT_ERRORS.settle}: insufficient funds`,
      transaction: '',
      network: 'eip155:8453',
      payer: payer.address.toLowerCase(),
    },
  );
  assert.equal(offer.accepts[0].payTo, r3.body.accepts[0].payTo);

  // v2 inline purchase refused before settling (the ceiling would leave nothing after since).
  const ok = await setup(t);
  const read = '/v1/signals?city=nyc&count=2&since=9';
  const inline = await stockSignature(ok.f, read);
  const r4 = await send(ok.f, read, { 'payment-signature': inline.header });
  assert.deepEqual([r4.status, r4.body.error], [402, 'paid signals exhausted; buy more to continue']);
  assert.equal(refusal(r4.res, true).response.errorReason, 'exhausted');
  assert.equal(refusal(r4.res, true).offer.extensions['sign-in-with-x'] !== undefined, true);
  assert.equal(payments(ok), 0);
});
