import { test } from 'node:test';
import assert from 'node:assert/strict';
import { listen, testApp } from '../helpers/app.ts';
import { insertSignals } from '../helpers/signals.ts';
import { createMockSettler } from '../../src/payments/settlers/mock.ts';
import type { Settler } from '../../src/payments/settlers/settler.ts';
import { PAYMENT_ERRORS } from '../../src/lib/api-errors.ts';
import { createMetrics } from '../../src/lib/metrics.ts';
import { buyerA, buyerB, over, signFor, subscribeWith } from './buy.ts';
import { createStores } from '../../src/stores.ts';

/** The mock settler behind a gate the test opens, recording each settle call. */
function gatedSettler(fail = false) {
  const inner = createMockSettler();
  let open!: () => void;
  const gate = new Promise<void>((r) => {
    open = r;
  });
  const calls: string[] = [];
  const stats = { active: 0, maxActive: 0 };
  const settler: Settler = {
    kind: 'mock',
    settle: async (req) => {
      calls.push(req.authorization.nonce);
      stats.maxActive = Math.max(stats.maxActive, ++stats.active);
      await gate;
      stats.active--;
      return fail ? { ok: false, inDoubt: false, reason: 'gate says no' } : inner.settle(req);
    },
    status: inner.status,
    maxSettleMs: 0,
  };
  return { settler, calls, open, stats };
}

async function setup(t: Parameters<typeof testApp>[0], settler?: Settler) {
  const e = testApp(t, settler ? { deps: { settler } } : {});
  return { ...e, f: over(await listen(t, e.app.fetch)) };
}

test('50 identical requests at once settle once and credit once; the rest answer idempotent', async (t) => {
  const g = gatedSettler();
  const { f, db, clock } = await setup(t, g.settler);
  insertSignals(db, 'nyc', 4);
  const p = await signFor(f, buyerA, 'nyc', 20, clock.now());
  const all = Array.from({ length: 50 }, () => subscribeWith(f, p.xPayment, 'nyc', 20));
  // Let every request reach the server before the one settle call is allowed to finish.
  while (g.calls.length === 0) await new Promise((r) => setTimeout(r, 5));
  await new Promise((r) => setTimeout(r, 50));
  g.open();
  const results = await Promise.all(all);
  assert.ok(
    results.every((r) => r.status === 200),
    JSON.stringify(results.map((r) => r.status)),
  );
  assert.equal(results.filter((r) => !r.body.idempotent).length, 1);
  assert.equal(new Set(results.map((r) => r.body.txHash)).size, 1);
  assert.ok(results.every((r) => r.body.paidThroughSeq === 24));
  // One token, with the one application; the 49 copies answer the state without one.
  assert.equal(results.filter((r) => r.body.receiptToken !== undefined).length, 1);
  assert.ok(results.find((r) => !r.body.idempotent)!.body.receiptToken);
  assert.equal(g.calls.length, 1);
  assert.equal(g.stats.maxActive, 1);
  assert.equal(db.prepare('SELECT count(*) FROM payments').pluck().get(), 1);
  assert.deepEqual(createStores(db).entitlements.get(buyerA.address, 'nyc'), {
    paidThroughSeq: 24,
    totalPaidSignals: 20,
  });
});

test('identical requests against a failing settlement all fail, never settle concurrently, and "not charged" stays true', async (t) => {
  const g = gatedSettler(true);
  const { f, db, clock } = await setup(t, g.settler);
  const p = await signFor(f, buyerA, 'nyc', 2, clock.now());
  const all = Array.from({ length: 10 }, () => subscribeWith(f, p.xPayment, 'nyc', 2));
  while (g.calls.length === 0) await new Promise((r) => setTimeout(r, 5));
  await new Promise((r) => setTimeout(r, 30));
  g.open();
  const results = await Promise.all(all);
  assert.ok(
    results.every(
      (r) => r.status === 402 && r.body.error === PAYMENT_ERRORS.settle && r.body.reason === 'gate says no',
    ),
  );
  assert.equal(g.calls.length, 1, 'one settle call: every copy answers the one definite failure');
  assert.equal(g.stats.maxActive, 1);
  assert.deepEqual(db.prepare('SELECT status, error FROM payments').all(), [
    { status: 'failed', error: 'gate says no' },
  ]);
  // The buyer was told "not charged" and may have paid anew: this authorization is never settled later.
  const again = await subscribeWith(f, p.xPayment, 'nyc', 2);
  assert.equal(again.status, 402);
  assert.equal(g.calls.length, 1);
  assert.equal(createStores(db).entitlements.get(buyerA.address, 'nyc'), null);
});

test('parallel different purchases by one wallet: every count lands once and the ceiling adds up', async (t) => {
  const { f, db, clock } = await setup(t);
  insertSignals(db, 'nyc', 10);
  insertSignals(db, 'miami', 3);
  const counts = [2, 3, 5, 7, 11, 13, 17, 19];
  // Different counts give different nonces; each is a separate purchase.
  const payments = await Promise.all(counts.map((c) => signFor(f, buyerA, 'nyc', c, clock.now())));
  const miami = await Promise.all([2, 4].map((c) => signFor(f, buyerA, 'miami', c, clock.now())));
  const results = await Promise.all([
    ...payments.map((p, i) => subscribeWith(f, p.xPayment, 'nyc', counts[i]!)),
    ...miami.map((p, i) => subscribeWith(f, p.xPayment, 'miami', [2, 4][i]!)),
  ]);
  assert.ok(results.every((r) => r.status === 200 && r.body.idempotent === false));
  const sum = counts.reduce((a, b) => a + b, 0);
  assert.deepEqual(createStores(db).entitlements.get(buyerA.address, 'nyc'), {
    paidThroughSeq: 10 + sum,
    totalPaidSignals: sum,
  });
  assert.deepEqual(createStores(db).entitlements.get(buyerA.address, 'miami'), {
    paidThroughSeq: 3 + 6,
    totalPaidSignals: 6,
  });
  // Each response saw a distinct step of the same running ceiling.
  const nycCeilings = results
    .slice(0, counts.length)
    .map((r) => r.body.paidThroughSeq as number)
    .sort((a, b) => a - b);
  assert.equal(new Set(nycCeilings).size, counts.length);
  assert.equal(nycCeilings.at(-1), 10 + sum);
  assert.equal(db.prepare('SELECT count(*) FROM payments').pluck().get(), counts.length + 2);
});

test('purchases sharing one group commit: the one whose entitlement fails is refunded alone, the rest apply', async (t) => {
  const g = gatedSettler();
  const metrics = createMetrics();
  const e = testApp(t, { deps: { settler: g.settler, metrics } });
  const f = over(await listen(t, e.app.fetch));
  insertSignals(e.db, 'nyc', 5);
  const b = buyerB.address.toLowerCase();
  e.db.exec(
    `CREATE TEMP TRIGGER only_b_fails BEFORE INSERT ON entitlements WHEN NEW.wallet = '${b}' BEGIN SELECT RAISE(ABORT, 'disk on fire'); END`,
  );
  const counts = [2, 3, 4, 5, 6];
  const forA = await Promise.all(counts.map((c) => signFor(f, buyerA, 'nyc', c, e.clock.now())));
  const forB = await signFor(f, buyerB, 'nyc', 2, e.clock.now());
  const all = [
    ...forA.map((p, i) => subscribeWith(f, p.xPayment, 'nyc', counts[i]!)),
    subscribeWith(f, forB.xPayment, 'nyc', 2),
  ];
  // Every settle call waits at the gate, so every application is queued in the same turn.
  while (g.calls.length < all.length) await new Promise((r) => setTimeout(r, 5));
  g.open();
  const results = await Promise.all(all);
  const a = results.slice(0, counts.length);
  assert.ok(
    a.every((r) => r.status === 200 && !r.body.idempotent && r.body.receiptToken),
    JSON.stringify(a.map((r) => r.status)),
  );
  assert.equal(results.at(-1)!.status, 502);
  assert.deepEqual(
    { error: results.at(-1)!.body.error, refund: results.at(-1)!.body.refund },
    { error: PAYMENT_ERRORS.entitlement, refund: 'queued' },
  );
  const sum = counts.reduce((x, y) => x + y, 0);
  assert.deepEqual(e.stores.entitlements.get(buyerA.address, 'nyc'), {
    paidThroughSeq: 5 + sum,
    totalPaidSignals: sum,
  });
  assert.equal(e.stores.entitlements.get(buyerB.address, 'nyc'), null);
  assert.deepEqual(e.db.prepare('SELECT status, count(*) AS n FROM payments GROUP BY status ORDER BY status').all(), [
    { status: 'applied', n: counts.length },
    { status: 'refund_queued', n: 1 },
  ]);
  assert.equal(e.db.prepare('SELECT count(*) FROM refunds').pluck().get(), 1);
  assert.equal(e.db.prepare('SELECT count(*) FROM receipts').pluck().get(), counts.length);
  // The six claims shared commits, and so did the applications until one failed: then the batch
  // was rolled back and each ran alone (five applied, one refused and then refunded on its own).
  const text = metrics.render();
  const value = (name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1]);
  assert.ok(value('isocast_payment_commits_total') < value('isocast_payment_commit_units_total'), text);
});
