import { test } from 'node:test';
import assert from 'node:assert/strict';
import { testApp } from '../helpers/app.ts';
import { startFakeFacilitator, type FacilitatorMode } from '../fakes/facilitator.ts';
import { createFacilitatorSettler } from '../../src/payments/settlers/facilitator.ts';
import { PAYMENT_ERRORS } from '../../src/lib/api-errors.ts';
import { buy, buyerA, buyerB, inApp, subscribeWith } from '../payments/buy.ts';
import { createStores } from '../../src/stores.ts';

/**
 * The facilitator misbehaving: rate limiting, slowness, and lies (success without a transaction
 * hash, one hash for two different payments). Invariants: nothing is credited without a
 * settlement we can record, nothing is credited twice, nobody is credited with someone else's
 * payment, and the same authorization succeeds once the facilitator behaves again.
 */
const PAY_TO = '0x00000000000000000000000000000000000000aa';

async function setup(
  t: Parameters<typeof testApp>[0],
  mode: FacilitatorMode,
  rpc = false,
  verify: 'always' | 'unless-recovered' = 'unless-recovered',
) {
  const fac = await startFakeFacilitator(mode);
  t.after(() => fac.close());
  const settler = createFacilitatorSettler({
    url: fac.url,
    verifyTimeoutMs: 1_000,
    settleTimeoutMs: 1_000,
    verify,
    ...(rpc ? { status: fac.status } : {}),
  });
  const e = testApp(t, {
    env: { PAYMENT_MODE: 'live', FEED: 'live', PAY_TO, FACILITATOR_URL: fac.url, OFAC_REQUIRED: 'false' },
    deps: { settler },
  });
  fac.chainTime = () => Math.floor(e.clock.now() / 1000);
  return { ...e, fac, f: inApp(e.app) };
}

const statuses = (db: ReturnType<typeof testApp>['db']) =>
  db.prepare('SELECT status FROM payments ORDER BY id').pluck().all();

test('facilitator rate-limited: 402 not charged, nothing credited; a new authorization succeeds once it recovers', async (t) => {
  // The fake rate-limits /verify, so it is asked first here.
  const { f, fac, db, clock } = await setup(t, 'rate-limited', false, 'always');
  const r = await buy(f, buyerA, 'nyc', 2, clock.now());
  assert.equal(r.status, 402);
  assert.equal(r.body.error, PAYMENT_ERRORS.settle);
  assert.equal(r.body.reason, 'facilitator: /verify answered HTTP 429: Too Many Requests');
  assert.equal(createStores(db).entitlements.get(buyerA.address, 'nyc'), null);
  assert.deepEqual(statuses(db), ['failed']);

  fac.mode = 'ok';
  // The refused authorization stays refused ("not charged" must stay true); the buyer pays anew.
  assert.equal((await subscribeWith(f, r.payment.xPayment, 'nyc', 2)).status, 402);
  // A refusal moves no salt step; the next minute's 402 binds a new nonce (docs/payments.md).
  clock.advance(60_000);
  const again = await buy(f, buyerA, 'nyc', 2, clock.now());
  assert.equal(again.status, 200);
  assert.equal(again.body.idempotent, false);
  const replay = await subscribeWith(f, again.payment.xPayment, 'nyc', 2);
  assert.equal(replay.body.idempotent, true);
  assert.deepEqual(createStores(db).entitlements.get(buyerA.address, 'nyc'), {
    paidThroughSeq: 2,
    totalPaidSignals: 2,
  });
  assert.deepEqual(statuses(db), ['failed', 'applied']);
});

test('facilitator success without a transaction hash: in doubt (503) without a chain; with one, the chain names the transfer', async (t) => {
  await t.test('no RPC', async (t) => {
    const { f, db, clock } = await setup(t, 'no-tx-hash');
    const r = await buy(f, buyerA, 'nyc', 2, clock.now());
    assert.equal(r.status, 503);
    assert.equal(r.body.error, PAYMENT_ERRORS.pending);
    assert.match(
      String(db.prepare('SELECT error FROM payments').pluck().get()),
      /^facilitator reported success without a transaction hash/,
    );
    assert.deepEqual(statuses(db), ['in_doubt']);
    assert.equal(createStores(db).entitlements.get(buyerA.address, 'nyc'), null);
  });
  await t.test('RPC', async (t) => {
    const { f, fac, db, clock } = await setup(t, 'no-tx-hash', true);
    const r = await buy(f, buyerA, 'nyc', 2, clock.now());
    assert.equal(r.status, 200);
    assert.equal(r.body.txHash, fac.chain.get(`${buyerA.address.toLowerCase()}:${r.payment.nonce}`));
    assert.deepEqual(statuses(db), ['applied']);
    assert.deepEqual(createStores(db).entitlements.get(buyerA.address, 'nyc'), {
      paidThroughSeq: 2,
      totalPaidSignals: 2,
    });
  });
});

test('a slow facilitator: five concurrent copies of one payment reach /settle once and credit once', async (t) => {
  const { f, fac, db, clock } = await setup(t, 'ok');
  fac.delayMs = 150;
  const first = await buy(f, buyerA, 'nyc', 2, clock.now()).then(async (r) => r);
  // `buy` already sent one copy; four more race each other after it.
  const copies = await Promise.all(Array.from({ length: 4 }, () => subscribeWith(f, first.payment.xPayment, 'nyc', 2)));
  assert.deepEqual([first.status, ...copies.map((c) => c.status)], [200, 200, 200, 200, 200]);
  assert.equal(fac.requests.filter((q) => q.path === '/settle').length, 1);

  const { payment } = await buy(f, buyerB, 'nyc', 20, clock.now()).then((r) => r);
  const racing = await Promise.all(Array.from({ length: 5 }, () => subscribeWith(f, payment.xPayment, 'nyc', 20)));
  assert.deepEqual(
    racing.map((c) => c.status),
    [200, 200, 200, 200, 200],
  );
  assert.equal(racing.filter((c) => c.body.idempotent === false).length, 0, 'the first copy (inside buy) applied it');
  assert.equal(fac.requests.filter((q) => q.path === '/settle').length, 2);
  assert.deepEqual(createStores(db).entitlements.get(buyerB.address, 'nyc'), {
    paidThroughSeq: 20,
    totalPaidSignals: 20,
  });
});

test('a facilitator that reports one transaction hash for two different payers credits neither with the other', async (t) => {
  const { f, db, clock } = await setup(t, 'same-tx');
  const a = await buy(f, buyerA, 'nyc', 2, clock.now());
  assert.equal(a.status, 200);
  const b = await buy(f, buyerB, 'london', 20, clock.now());
  // B's authorization was not settled by that transaction (it is A's), so B is not credited, and
  // above all B must not walk away with a receipt that reads A's entitlements.
  // Whether B was charged is unknown (the facilitator lied): in doubt, never "not charged".
  assert.equal(b.status, 503, JSON.stringify(b.body));
  assert.equal(b.body.error, PAYMENT_ERRORS.pending);
  assert.equal(b.body.receiptToken, undefined);
  assert.equal(createStores(db).entitlements.get(buyerB.address, 'london'), null);
  assert.deepEqual(createStores(db).entitlements.get(buyerA.address, 'nyc'), {
    paidThroughSeq: 2,
    totalPaidSignals: 2,
  });
  const wallets = (db.prepare('SELECT selector FROM receipts').pluck().all() as string[]).length;
  assert.equal(wallets, 1, 'only A holds a receipt');
  assert.equal(createStores(db).receipts.walletFor(a.body.receiptToken), buyerA.address.toLowerCase());
  assert.deepEqual(statuses(db), ['applied', 'in_doubt']);
});

test('facilitator down (connection refused): no byte of /settle left, so 402 not charged and the payment is failed, not in doubt', async (t) => {
  const fac = await startFakeFacilitator('ok');
  const url = fac.url;
  await fac.close();
  const settler = createFacilitatorSettler({ url, verifyTimeoutMs: 1_000, settleTimeoutMs: 1_000, status: fac.status });
  const e = testApp(t, {
    env: { PAYMENT_MODE: 'live', FEED: 'live', PAY_TO, FACILITATOR_URL: url, OFAC_REQUIRED: 'false' },
    deps: { settler },
  });
  const f = inApp(e.app);
  const r = await buy(f, buyerA, 'nyc', 2, e.clock.now());
  assert.equal(r.status, 402, JSON.stringify(r.body));
  assert.equal(r.body.error, PAYMENT_ERRORS.settle);
  assert.match(r.body.reason, /^facilitator unreachable: request failed: .*ECONNREFUSED/);
  assert.deepEqual(statuses(e.db), ['failed']);
  assert.equal(e.stores.entitlements.get(buyerA.address, 'nyc'), null);
});
