import type { Hex } from 'viem';
import type { Db } from '../db/open.ts';
import type { Clock } from '../lib/clock.ts';
import type { ApiError } from '../lib/errors.ts';
import type { Logger } from '../lib/logger.ts';
import { applyPurchase, entitlementOf } from '../entitlements/store.ts';
import { issueReceipt } from '../entitlements/receipts.ts';
import { refundQueued, settleFailed } from './errors.ts';
import type { Purchase } from './plane.ts';
import type { PaymentRow, PaymentStore } from './store.ts';

/**
 * The recording side of the plane: a settlement's transaction is written, the payment applied
 * exactly once (entitlement and, for the request that moved the money, the receipt, in one
 * transaction), and a stored payment answered by its state. Nothing here calls a settler.
 */
export function createLedger(deps: { db: Db; store: PaymentStore; clock: Clock; logger: Logger; pending: () => ApiError }) {
  const { db, store, clock, logger, pending } = deps;
  const latest = db.prepare('SELECT coalesce(max(seq), 0) FROM signals WHERE city = ?').pluck();

  function stateOf(row: PaymentRow, idempotent: boolean): Purchase {
    const ent = entitlementOf(db, row.payer, row.city);
    return {
      payer: row.payer, city: row.city, count: row.count, paymentId: row.id, txHash: row.tx_hash, idempotent,
      paidThroughSeq: ent?.paidThroughSeq ?? 0, totalPaidSignals: ent?.totalPaidSignals ?? 0,
      latestSeq: latest.get(row.city) as number, receiptToken: null,
    };
  }

  // One transaction: the payment leaves `settled`, the ceiling moves, the receipt is stored.
  const applyTx = db.transaction((id: number, nowMs: number, withReceipt: boolean): Purchase | null => {
    if (!store.markAppliedStmt(id, nowMs)) return null;
    const row = store.get(id)!;
    const ent = applyPurchase(db, { wallet: row.payer, city: row.city, count: row.count, nowMs });
    return {
      payer: row.payer, city: row.city, count: row.count, paymentId: id, txHash: row.tx_hash, idempotent: false,
      paidThroughSeq: ent.paidThroughSeq, totalPaidSignals: ent.totalPaidSignals, latestSeq: ent.latestSeq,
      receiptToken: withReceipt ? issueReceipt(db, row.payer, id, nowMs) : null,
    };
  });

  /** Applies a settled payment exactly once; a failure queues a refund and answers 502. */
  function apply(id: number, withReceipt: boolean): Purchase {
    const nowMs = clock.now();
    let applied: Purchase | null;
    try {
      applied = applyTx(id, nowMs, withReceipt);
    } catch (err) {
      store.queueRefund(id, `entitlement update failed: ${(err as Error).message}`, nowMs);
      const row = store.get(id);
      logger.error('entitlement update failed after payment; refund queued', { paymentId: id, payer: row?.payer, nonce: row?.nonce, city: row?.city, settler: row?.settler, txHash: row?.tx_hash, err });
      throw refundQueued();
    }
    const row = store.get(id)!;
    if (!applied) return answer(row);
    logger.info('payment applied', { paymentId: id, payer: row.payer, city: row.city, count: row.count, txHash: row.tx_hash, settler: row.settler, paidThroughSeq: applied.paidThroughSeq });
    return applied;
  }

  /** What a stored payment answers, moving nothing but a settled row's entitlement. */
  function answer(row: PaymentRow): Purchase {
    switch (row.status) {
      case 'applied': return stateOf(row, true);
      case 'settled': return apply(row.id, false);
      case 'refund_queued': throw refundQueued();
      case 'failed': throw settleFailed(row.error ?? 'not settled');
      default: throw pending();
    }
  }

  /** Records the transfer, then applies. A hash another payment holds leaves this one in doubt. */
  function recordAndApply(id: number, txHash: Hex | null, withReceipt: boolean): Purchase {
    const nowMs = clock.now();
    const hash = txHash ? txHash.toLowerCase() : null;
    try {
      if (!store.markSettled(id, hash, nowMs)) return answer(store.get(id)!);
    } catch (err) {
      const other = hash ? store.byTxHash(hash) : null;
      if (!other) throw err;
      // One transfer settles one authorization, so a hash another row holds is a settler fault.
      // Whether this payer was charged is unknown: in doubt, for the chain to decide.
      const row = store.get(id)!;
      store.markInDoubt(id, `settler named transaction ${hash}, which belongs to payment ${other.id}`, nowMs);
      logger.error('settler returned a transaction hash held by another payment; left in doubt', { paymentId: id, otherPaymentId: other.id, payer: row.payer, nonce: row.nonce, settler: row.settler, txHash: hash });
      throw pending();
    }
    return apply(id, withReceipt);
  }

  return { stateOf, apply, answer, recordAndApply };
}
