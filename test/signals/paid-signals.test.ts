import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PaymentRequiredV1Schema } from '@x402/core/schemas';
import { testApp } from '../helpers/app.ts';
import { insertSignals, signalPayload } from '../helpers/signals.ts';
import { payFor402 } from '../../packages/isocast-client/src/index.ts';
import { PAYMENT_ERRORS } from '../../src/lib/api-errors.ts';
import { paymentSchemas } from '../../src/payments/schemas.ts';
import { decodePaymentResponseHeader as decodePaymentResponse } from '@x402/core/http';
import { buy, buyerA, buyerB, inApp, type Fetcher } from '../payments/buy.ts';

const { SignalsPage } = paymentSchemas();

async function setup(t: Parameters<typeof testApp>[0], env: Record<string, string> = {}) {
  const e = testApp(t, { env });
  const f = inApp(e.app);
  return { ...e, f };
}

async function read(f: Fetcher, query: string, auth?: Record<string, string>) {
  const res = await f(`/v1/signals?${query}`, { headers: auth });
  return { status: res.status, body: (await res.json()) as Record<string, any>, res };
}
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

test('no credential: 402 challenge for the default count of 20, readable by x402 tooling', async (t) => {
  const { f } = await setup(t);
  const r = await read(f, 'city=nyc');
  assert.equal(r.status, 402);
  PaymentRequiredV1Schema.parse(r.body);
  assert.equal(r.body.extra.binding.count, 20);
  assert.equal(r.body.accepts[0].maxAmountRequired, '100000');
  assert.equal(r.body.accepts[0].resource, 'http://127.0.0.1:8402/v1/signals?city=nyc&count=20');
  assert.equal(r.body.paid_through, undefined);
  const r5 = await read(f, 'city=nyc&count=5');
  assert.equal(r5.body.extra.binding.count, 5);
});

test('query validation: since >= 0 integer, count >= 2, unknown city 404', async (t) => {
  const { f } = await setup(t);
  const cases: [string, number, string][] = [
    ['city=nyc&since=-1', 400, 'since must be an integer of at least 0'],
    ['city=nyc&since=1.5', 400, 'since must be an integer of at least 0'],
    ['city=nyc&count=1', 400, PAYMENT_ERRORS.count],
    ['since=0', 400, 'city is required'],
    ['city=atlantis', 404, 'unknown city'],
  ];
  for (const [q, status, error] of cases) {
    const r = await read(f, q);
    assert.equal(r.status, status, q);
    assert.equal(r.body.error, error, q);
  }
});

test('bearer reads return since < seq <= paid_through ascending, with cursors, and exhaustion is a 402', async (t) => {
  const { f, db, clock } = await setup(t);
  insertSignals(db, 'nyc', 5);
  const bought = await buy(f, buyerA, 'nyc', 3, clock.now());
  assert.equal(bought.body.paidThroughSeq, 8);
  insertSignals(db, 'nyc', 6); // latest 11; seq 9..11 are beyond the ceiling
  const token = bought.body.receiptToken as string;

  const all = await read(f, 'city=nyc', bearer(token));
  assert.equal(all.status, 200);
  SignalsPage.parse(all.body);
  assert.deepEqual(
    all.body.signals.map((s: any) => s.seq),
    [1, 2, 3, 4, 5, 6, 7, 8],
  );
  assert.deepEqual(all.body.signals[0], signalPayload('nyc', 1));
  assert.deepEqual(
    { next: all.body.next_cursor, pt: all.body.paid_through, latest: all.body.latest, more: all.body.more },
    { next: 8, pt: 8, latest: 11, more: false },
  );

  const tail = await read(f, 'city=nyc&since=6', bearer(token));
  assert.deepEqual(
    tail.body.signals.map((s: any) => s.seq),
    [7, 8],
  );

  const done = await read(f, 'city=nyc&since=8', bearer(token));
  assert.equal(done.status, 402);
  PaymentRequiredV1Schema.parse(done.body);
  assert.equal(done.body.paid_through, 8);
  assert.equal(done.body.latest, 11);
  assert.equal(done.body.extra.binding.count, 20);

  // Replay from 0 works for the token's whole life (signals never expire; tokens do after
  // RECEIPT_TTL_DAYS, issue 23 item 5, and a new one comes from POST /v1/receipts).
  clock.advance(89 * 24 * 3600 * 1000);
  assert.equal((await read(f, 'city=nyc&since=0', bearer(token))).body.signals.length, 8);
  clock.advance(400 * 24 * 3600 * 1000);
  assert.equal((await read(f, 'city=nyc&since=0', bearer(token))).status, 401);
});

test('one receipt reads every city the wallet paid for, and only those', async (t) => {
  const { f, db, clock } = await setup(t);
  insertSignals(db, 'nyc', 2);
  insertSignals(db, 'miami', 2);
  const a = await buy(f, buyerA, 'nyc', 2, clock.now());
  await buy(f, buyerA, 'miami', 2, clock.now());
  const token = a.body.receiptToken as string;
  assert.equal((await read(f, 'city=miami', bearer(token))).body.signals.length, 2);
  const chicago = await read(f, 'city=chicago', bearer(token));
  assert.equal(chicago.status, 402);
  assert.equal(chicago.body.paid_through, 0);
  // Another wallet's purchase does not open reads for this one, nor the reverse.
  const b = await buy(f, buyerB, 'chicago', 2, clock.now());
  assert.equal((await read(f, 'city=nyc', bearer(b.body.receiptToken))).status, 402);
});

test('unknown or malformed bearer tokens get the challenge, never signals', async (t) => {
  const { f, db, clock } = await setup(t);
  insertSignals(db, 'nyc', 2);
  const a = await buy(f, buyerA, 'nyc', 2, clock.now());
  const token = a.body.receiptToken as string;
  const forged = token.slice(0, -4) + (token.endsWith('AAAA') ? 'BBBB' : 'AAAA');
  for (const t of [forged, 'isr_nope', 'random', `isr_${'A'.repeat(16)}_${'A'.repeat(43)}`]) {
    const r = await read(f, 'city=nyc', bearer(t));
    assert.equal(r.status, 402, t);
    assert.equal(r.body.error, 'receipt token not recognised; pay to continue');
  }
});

test('pages hold at most 100 rows; more comes from probing one further entitled row', async (t) => {
  const { f, db, clock } = await setup(t);
  const a = await buy(f, buyerA, 'seattle', 201, clock.now());
  insertSignals(db, 'seattle', 230);
  const token = a.body.receiptToken as string;
  const p1 = await read(f, 'city=seattle', bearer(token));
  assert.equal(p1.body.signals.length, 100);
  assert.deepEqual([p1.body.next_cursor, p1.body.more], [100, true]);
  const p2 = await read(f, `city=seattle&since=${p1.body.next_cursor}`, bearer(token));
  assert.deepEqual([p2.body.signals.length, p2.body.next_cursor, p2.body.more], [100, 200, true]);
  const p3 = await read(f, `city=seattle&since=200`, bearer(token));
  // Row 201 is entitled; 202..230 exist but are beyond the ceiling, so the probe says no more.
  assert.deepEqual(
    [p3.body.signals.length, p3.body.next_cursor, p3.body.more, p3.body.paid_through],
    [1, 201, false, 201],
  );
  // Exactly 100 entitled rows left: a full page with more=false.
  const p4 = await read(f, `city=seattle&since=101`, bearer(token));
  assert.deepEqual([p4.body.signals.length, p4.body.more], [100, false]);
});

test('entitled but not yet published: 200 with no rows until signals arrive', async (t) => {
  const { f, db, clock } = await setup(t);
  const a = await buy(f, buyerA, 'dallas', 2, clock.now());
  const r = await read(f, 'city=dallas', bearer(a.body.receiptToken));
  assert.equal(r.status, 200);
  assert.deepEqual(
    [r.body.signals.length, r.body.next_cursor, r.body.paid_through, r.body.latest, r.body.more],
    [0, 0, 2, 0, false],
  );
  insertSignals(db, 'dallas', 3);
  const r2 = await read(f, 'city=dallas', bearer(a.body.receiptToken));
  assert.deepEqual(
    r2.body.signals.map((s: any) => s.seq),
    [1, 2],
  );
});

test('inline X-Payment runs the subscribe flow, then reads; a receipt comes back in a header', async (t) => {
  const { f, db, clock } = await setup(t);
  insertSignals(db, 'nyc', 4);
  const ch = await read(f, 'city=nyc&count=3');
  const p = await payFor402(ch.body, buyerA, { nowMs: clock.now() });
  const r = await read(f, 'city=nyc&count=3', { 'x-payment': p.xPayment });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.deepEqual(
    r.body.signals.map((s: any) => s.seq),
    [1, 2, 3, 4],
  );
  assert.equal(r.body.paid_through, 7);
  assert.equal(decodePaymentResponse(r.res.headers.get('x-payment-response')!).payer, buyerA.address.toLowerCase());
  const token = r.res.headers.get('x-receipt-token')!;
  assert.equal((await read(f, 'city=nyc', bearer(token))).body.paid_through, 7);
  // The same header again: idempotent, no second credit, and no rows (issue 23: only the request
  // that moved the money reads with it; afterwards the bearer token reads).
  const again = await read(f, 'city=nyc&count=3', { 'x-payment': p.xPayment });
  assert.equal(again.status, 402);
  assert.equal(again.body.signals, undefined);
  assert.deepEqual([again.body.paid_through, again.body.idempotent], [7, true]);
  assert.equal(db.prepare('SELECT count(*) FROM payments').pluck().get(), 1);
});

test('inline payment failures and sanctions use the subscribe statuses', async (t) => {
  const { f, clock } = await setup(t, { OFAC_EXTRA: buyerB.address });
  const ch = await read(f, 'city=nyc&count=2');
  const forB = await payFor402(ch.body, buyerB, { nowMs: clock.now() });
  const r = await read(f, 'city=nyc&count=2', { 'x-payment': forB.xPayment });
  assert.equal(r.status, 403);
  assert.equal(r.body.error, PAYMENT_ERRORS.sanctioned);
  const forA = await payFor402(ch.body, buyerA, { nowMs: clock.now() });
  const mismatch = await read(f, 'city=nyc&count=3', { 'x-payment': forA.xPayment });
  assert.equal(mismatch.status, 402);
  assert.equal(mismatch.body.error, PAYMENT_ERRORS.verify);
  const garbage = await read(f, 'city=nyc', { 'x-payment': 'garbage' });
  assert.equal(garbage.body.error, PAYMENT_ERRORS.verify);
});

test('a wallet listed after buying cannot read with its receipt', async (t) => {
  const e1 = testApp(t);
  const f1 = inApp(e1.app);
  const a = await buy(f1, buyerA, 'nyc', 2, e1.clock.now());
  const { createApp } = await import('../../src/app.ts');
  const { loadSanctionsList } = await import('../../src/sanctions/list.ts');
  const listed = createApp({ ...e1.deps, sanctions: loadSanctionsList({ extra: buyerA.address }) });
  const f2 = inApp(listed);
  const r = await read(f2, 'city=nyc', bearer(a.body.receiptToken));
  assert.equal(r.status, 403);
  assert.equal(r.body.error, PAYMENT_ERRORS.sanctioned);
});
