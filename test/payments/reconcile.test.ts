import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Hex } from 'viem';
import { testApp } from '../helpers/app.ts';
import { insertSignals } from '../helpers/signals.ts';
import { entitlementOf } from '../../src/entitlements/index.ts';
import { paymentPlaneFor } from '../../src/payments/plane.ts';
import { reconcilePayments } from '../../src/payments/reconcile.ts';
import { createMockSettler } from '../../src/payments/settlers/mock.ts';
import type { Settler, SettlementLookup } from '../../src/payments/settlers/settler.ts';

const W = '0x00000000000000000000000000000000000000c1';
const tx = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;

function row(db: ReturnType<typeof testApp>['db'], id: number, status: string, city = 'nyc', count = 5, txHash: string | null = null) {
  db.prepare(`INSERT INTO payments (id, payer, nonce, city, count, amount_micro, settler, status, tx_hash, created_at, updated_at)
    VALUES (?, ?, ?, ?, ?, ?, 'mock', ?, ?, 0, 0)`).run(id, W, tx(1000 + id), city, count, count * 5000, status, txHash);
}

function lookupSettler(answer: (nonce: Hex) => SettlementLookup): Settler {
  return { ...createMockSettler(), lookup: async (_p, nonce) => answer(nonce) };
}

async function run(e: ReturnType<typeof testApp>, settler: Settler = createMockSettler()) {
  const plane = paymentPlaneFor({ ...e.deps, settler });
  return reconcilePayments({ plane, settler, clock: e.clock, logger: e.logger });
}

test('a payment settled before a crash is applied exactly once at start', async (t) => {
  const e = testApp(t);
  insertSignals(e.db, 'nyc', 3);
  row(e.db, 1, 'settled', 'nyc', 5, tx(1));
  row(e.db, 2, 'applied', 'nyc', 2, tx(2));
  assert.deepEqual(await run(e), { applied: 1, refunded: 0, released: 0, unknown: 0 });
  assert.deepEqual(entitlementOf(e.db, W, 'nyc'), { paidThroughSeq: 8, totalPaidSignals: 5 });
  assert.deepEqual(e.db.prepare('SELECT status FROM payments ORDER BY id').pluck().all(), ['applied', 'applied']);
  assert.deepEqual(await run(e), { applied: 0, refunded: 0, released: 0, unknown: 0 });
  assert.deepEqual(entitlementOf(e.db, W, 'nyc'), { paidThroughSeq: 8, totalPaidSignals: 5 });
  assert.ok(e.logger.lines.some((l) => l.includes('reconciled: payment applied')));
  // Reconciliation issues no receipt: nobody is there to receive it.
  assert.equal(e.db.prepare('SELECT count(*) FROM receipts').pluck().get(), 0);
});

test('a settled payment that still cannot be applied gets a refund queued', async (t) => {
  const e = testApp(t);
  row(e.db, 1, 'settled', 'nyc', 5, tx(1));
  e.db.exec(`CREATE TEMP TRIGGER boom BEFORE INSERT ON entitlements BEGIN SELECT RAISE(ABORT, 'nope'); END`);
  assert.deepEqual(await run(e), { applied: 0, refunded: 1, released: 0, unknown: 0 });
  assert.deepEqual(e.db.prepare('SELECT payment_id, wallet, amount_micro, tx_hash, status FROM refunds').all(), [{ payment_id: 1, wallet: W, amount_micro: 25_000, tx_hash: tx(1), status: 'queued' }]);
  assert.ok(e.logger.lines.some((l) => l.includes('reconciled: refund queued')));
});

test('claims interrupted mid-settle: found on chain -> applied; never sent -> released; unknowable -> released and warned', async (t) => {
  const e = testApp(t);
  row(e.db, 1, 'claimed', 'nyc', 4);
  row(e.db, 2, 'claimed', 'miami', 3);
  row(e.db, 3, 'claimed', 'dallas', 2);
  const settler = lookupSettler((nonce) => (nonce === tx(1001) ? { found: tx(77) as Hex } : nonce === tx(1002) ? { found: null } : { unknown: true }));
  assert.deepEqual(await run(e, settler), { applied: 1, refunded: 0, released: 1, unknown: 1 });
  assert.deepEqual(e.db.prepare('SELECT id, status, tx_hash, error FROM payments ORDER BY id').all(), [
    { id: 1, status: 'applied', tx_hash: tx(77), error: null },
    { id: 2, status: 'failed', tx_hash: null, error: 'interrupted before settlement; not charged' },
    { id: 3, status: 'failed', tx_hash: null, error: 'interrupted during settlement; outcome unknown' },
  ]);
  assert.deepEqual(entitlementOf(e.db, W, 'nyc'), { paidThroughSeq: 4, totalPaidSignals: 4 });
  assert.equal(entitlementOf(e.db, W, 'miami'), null);
  assert.ok(e.logger.lines.some((l) => l.includes('settlement outcome unknown') && l.includes('"level":"warn"')));
});

test('a lookup that throws leaves the claim for the next start', async (t) => {
  const e = testApp(t);
  row(e.db, 1, 'claimed');
  const settler: Settler = { ...createMockSettler(), lookup: async () => { throw new Error('rpc down'); } };
  assert.deepEqual(await run(e, settler), { applied: 0, refunded: 0, released: 0, unknown: 0 });
  assert.equal(e.db.prepare('SELECT status FROM payments').pluck().get(), 'claimed');
});
