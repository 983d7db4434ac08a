import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Address, Hex } from 'viem';
import { testApp } from '../helpers/app.ts';
import { insertSignals } from '../helpers/signals.ts';
import { paymentPlaneFor } from '../../src/payments/plane.ts';
import { reconcilePayments, startReconciler } from '../../src/payments/reconcile.ts';
import { createMockSettler } from '../../src/payments/settlers/mock.ts';
import type { AuthorizationStatus, Settler } from '../../src/payments/settlers/settler.ts';

const W = '0x00000000000000000000000000000000000000c1';
const tx = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;

function row(
  db: ReturnType<typeof testApp>['db'],
  id: number,
  status: string,
  city = 'nyc',
  count = 5,
  txHash: string | null = null,
  validBefore: number | null = null,
) {
  db.prepare(`INSERT INTO payments (id, payer, nonce, city, count, amount_micro, settler, status, tx_hash, created_at, updated_at, valid_before)
    VALUES (?, ?, ?, ?, ?, ?, 'mock', ?, ?, 0, 0, ?)`).run(
    id,
    W,
    tx(1000 + id),
    city,
    count,
    count * 5000,
    status,
    txHash,
    validBefore,
  );
}

/** A settler whose chain answers per nonce; every status call is recorded. */
function chainSettler(answer: (nonce: Hex, validBefore: number) => AuthorizationStatus) {
  const calls: { payer: Address; nonce: Hex; validBefore: number }[] = [];
  const settler: Settler = {
    ...createMockSettler(),
    settle: async () => {
      throw new Error('the reconciler never settles');
    },
    status: async (payer, nonce, { validBefore }) => {
      calls.push({ payer, nonce, validBefore });
      return answer(nonce, validBefore);
    },
  };
  return { settler, calls };
}

async function run(e: ReturnType<typeof testApp>, settler: Settler = createMockSettler()) {
  const plane = paymentPlaneFor({ ...e.deps, settler });
  return reconcilePayments({ plane, logger: e.logger });
}

const statuses = (e: ReturnType<typeof testApp>) =>
  e.db.prepare('SELECT id, status, tx_hash, error FROM payments ORDER BY id').all();

test('a payment settled before a crash is applied exactly once at start', async (t) => {
  const e = testApp(t);
  insertSignals(e.db, 'nyc', 3);
  row(e.db, 1, 'settled', 'nyc', 5, tx(1));
  row(e.db, 2, 'applied', 'nyc', 2, tx(2));
  assert.deepEqual(await run(e), { applied: 1, refunded: 0, failed: 0, pending: 0 });
  assert.deepEqual(e.stores.entitlements.get(W, 'nyc'), { paidThroughSeq: 8, totalPaidSignals: 5 });
  assert.deepEqual(e.db.prepare('SELECT status FROM payments ORDER BY id').pluck().all(), ['applied', 'applied']);
  assert.deepEqual(await run(e), { applied: 0, refunded: 0, failed: 0, pending: 0 });
  assert.deepEqual(e.stores.entitlements.get(W, 'nyc'), { paidThroughSeq: 8, totalPaidSignals: 5 });
  assert.ok(e.logger.lines.some((l) => l.includes('reconciled: payment applied')));
  // Reconciliation issues no receipt: nobody is there to receive it.
  assert.equal(e.db.prepare('SELECT count(*) FROM receipts').pluck().get(), 0);
});

test('a settled payment that still cannot be applied gets a refund queued', async (t) => {
  const e = testApp(t);
  row(e.db, 1, 'settled', 'nyc', 5, tx(1));
  e.db.exec(`CREATE TEMP TRIGGER boom BEFORE INSERT ON entitlements BEGIN SELECT RAISE(ABORT, 'nope'); END`);
  assert.deepEqual(await run(e), { applied: 0, refunded: 1, failed: 0, pending: 0 });
  assert.deepEqual(e.db.prepare('SELECT payment_id, wallet, amount_micro, tx_hash, status FROM refunds').all(), [
    { payment_id: 1, wallet: W, amount_micro: 25_000, tx_hash: tx(1), status: 'queued' },
  ]);
  assert.ok(e.logger.lines.some((l) => l.includes('reconciled: refund queued')));
});

test('cut-off claims and in-doubt payments: only the chain decides, and "failed" only for unused past validBefore', async (t) => {
  const e = testApp(t);
  const now = Math.floor(e.clock.now() / 1000);
  row(e.db, 1, 'claimed', 'nyc', 4, null, now + 100); // used on chain
  row(e.db, 2, 'claimed', 'miami', 3, null, now - 1); // unused, expired
  row(e.db, 3, 'in_doubt', 'dallas', 2, null, now + 100); // unused, still valid
  row(e.db, 4, 'in_doubt', 'denver', 2, null, now + 100); // RPC down
  row(e.db, 5, 'in_doubt', 'austin', 2, null, null); // pre-0006 row: validBefore bounded by created_at
  const { settler, calls } = chainSettler((nonce, validBefore) => {
    if (nonce === tx(1001)) return { state: 'used', txHash: tx(77) as Hex };
    if (nonce === tx(1004)) return { state: 'unknown', reason: 'rpc: connection refused' };
    return { state: 'unused', expired: now >= validBefore };
  });
  assert.deepEqual(await run(e, settler), { applied: 1, refunded: 0, failed: 2, pending: 2 });
  assert.deepEqual(statuses(e), [
    { id: 1, status: 'applied', tx_hash: tx(77), error: null },
    { id: 2, status: 'failed', tx_hash: null, error: 'authorization expired unused on chain; not charged' },
    { id: 3, status: 'in_doubt', tx_hash: null, error: null },
    { id: 4, status: 'in_doubt', tx_hash: null, error: null },
    { id: 5, status: 'failed', tx_hash: null, error: 'authorization expired unused on chain; not charged' },
  ]);
  assert.equal(calls.find((c) => c.nonce === tx(1005))!.validBefore, 900, 'created_at 0 + the longest lifetime');
  assert.deepEqual(e.stores.entitlements.get(W, 'nyc'), { paidThroughSeq: 4, totalPaidSignals: 4 });
  assert.equal(e.stores.entitlements.get(W, 'miami'), null);
  assert.ok(
    e.logger.lines.some((l) => l.includes('in-doubt payment still unresolved') && l.includes('connection refused')),
  );
  // Applied once: a second pass changes nothing and credits nothing twice.
  assert.deepEqual(await run(e, settler), { applied: 0, refunded: 0, failed: 0, pending: 2 });
  assert.deepEqual(e.stores.entitlements.get(W, 'nyc'), { paidThroughSeq: 4, totalPaidSignals: 4 });
});

test('the reconciler runs on a timer while serving and credits an in-doubt payment once the chain shows it', async (t) => {
  const e = testApp(t);
  row(e.db, 1, 'in_doubt', 'nyc', 4, null, Math.floor(e.clock.now() / 1000) + 300);
  let landed = false;
  const { settler } = chainSettler(() =>
    landed ? { state: 'used', txHash: tx(5) as Hex } : { state: 'unused', expired: false },
  );
  const plane = paymentPlaneFor({ ...e.deps, settler });
  const r = startReconciler({ plane, logger: e.logger, intervalMs: 20 });
  t.after(() => r.stop());
  await new Promise((res) => setTimeout(res, 80));
  assert.equal(e.db.prepare('SELECT status FROM payments').pluck().get(), 'in_doubt');
  landed = true;
  for (let i = 0; i < 100 && e.db.prepare('SELECT status FROM payments').pluck().get() !== 'applied'; i++)
    await new Promise((res) => setTimeout(res, 10));
  assert.equal(e.db.prepare('SELECT status FROM payments').pluck().get(), 'applied');
  await new Promise((res) => setTimeout(res, 60));
  assert.deepEqual(e.stores.entitlements.get(W, 'nyc'), { paidThroughSeq: 4, totalPaidSignals: 4 });
  await r.stop();
});
