import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Hex } from 'viem';
import { testApp } from '../helpers/app.ts';
import { paymentPlaneFor } from '../../src/payments/plane.ts';
import { reconcilePayments } from '../../src/payments/reconcile.ts';
import { createMockSettler } from '../../src/payments/settlers/mock.ts';
import type { Settler } from '../../src/payments/settlers/settler.ts';

/**
 * Issue 23 item 6: junk in doubt must never delay a real payment in the reconciler. 40 junk rows
 * (nothing was sent; the chain is slow to answer for each) were claimed before one real payment
 * whose transaction landed; the real one is asked first and applied before any junk lookup ends.
 */
const REAL = '0x00000000000000000000000000000000000000c1';
const nonce = (n: number) => `0x${n.toString(16).padStart(64, '0')}` as Hex;

test('the reconciler asks about a real in-doubt payment before any junk row, however many were claimed before it', async (t) => {
  const e = testApp(t, { nowMs: Date.now() });
  const insert =
    e.db.prepare(`INSERT INTO payments (id, payer, nonce, city, count, amount_micro, settler, status, error, created_at, updated_at, valid_before)
    VALUES (?, ?, ?, 'nyc', 20, 100000, 'chain', 'in_doubt', ?, 0, 0, ?)`);
  const validBefore = Math.floor(Date.now() / 1000) + 3600;
  const JUNK = 40;
  for (let i = 1; i <= JUNK; i++)
    insert.run(
      i,
      `0x${i.toString(16).padStart(40, '0')}`,
      nonce(i),
      // The mark a chain settler's `sent: false` is stored with, as in older databases.
      'nothing sent: rpc: connection refused',
      validBefore,
    );
  insert.run(JUNK + 1, REAL, nonce(999), 'transaction 0xabc not confirmed: timed out', validBefore);

  const asked: Hex[] = [];
  let junkAnswered = 0;
  let junkAnsweredWhenRealApplied = -1;
  const settler: Settler = {
    ...createMockSettler(),
    kind: 'chain',
    settle: async () => {
      throw new Error('the reconciler never settles');
    },
    status: async (_payer, n) => {
      asked.push(n);
      if (n === nonce(999)) {
        junkAnsweredWhenRealApplied = junkAnswered;
        return { state: 'used', txHash: `0x${'ab'.repeat(32)}` as Hex };
      }
      await new Promise((r) => setTimeout(r, 20)); // a slow RPC answer per junk row
      junkAnswered++;
      return { state: 'unused', expired: false };
    },
  };
  const plane = paymentPlaneFor({ ...e.deps, settler });
  const report = await reconcilePayments({ plane, logger: e.logger });
  assert.deepEqual(report, { applied: 1, refunded: 0, failed: 0, pending: JUNK });
  assert.equal(asked[0], nonce(999), 'the real payment is the first row asked about');
  assert.equal(junkAnsweredWhenRealApplied, 0, 'no junk lookup finished before it');
  assert.deepEqual(e.stores.entitlements.get(REAL, 'nyc'), { paidThroughSeq: 20, totalPaidSignals: 20 });
  assert.equal(asked.length, JUNK + 1, 'every junk row is still looked at, after it');
});
