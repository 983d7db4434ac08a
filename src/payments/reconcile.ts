import type { Logger } from '../lib/logger.ts';
import type { PaymentPlane } from './plane.ts';

/**
 * Repair of open payments: at start (before the server listens) and on a timer while serving.
 * - `settled` (money moved, entitlement not applied): applied once now, or a refund is queued;
 * - `claimed` with no settle running (cut off by a crash or a shutdown) and `in_doubt`: the token
 *   contract's authorizationState decides. Used: the transfer is found and applied once. Unused
 *   past validBefore: failed, truly not charged. Anything else stays in doubt for the next pass;
 *   nothing is ever settled again without the buyer's header, and nothing is marked failed on a
 *   guess.
 */
export type ReconcileReport = { applied: number; refunded: number; failed: number; pending: number };

export async function reconcilePayments(deps: { plane: PaymentPlane; logger: Logger }): Promise<ReconcileReport> {
  const { plane, logger } = deps;
  const report: ReconcileReport = { applied: 0, refunded: 0, failed: 0, pending: 0 };
  for (const row of plane.store.open()) {
    let result: Awaited<ReturnType<PaymentPlane['reconcile']>>;
    try {
      result = await plane.reconcile(row);
    } catch (err) {
      logger.error('reconcile step failed; payment left as it was', {
        paymentId: row.id,
        payer: row.payer,
        nonce: row.nonce,
        settler: row.settler,
        txHash: row.tx_hash,
        err,
      });
      report.pending++;
      continue;
    }
    if (result === 'busy') continue;
    report[result]++;
    if (result === 'applied')
      logger.info('reconciled: payment applied', { paymentId: row.id, payer: row.payer, nonce: row.nonce });
    if (result === 'refunded')
      logger.warn('reconciled: refund queued', { paymentId: row.id, payer: row.payer, nonce: row.nonce });
  }
  if (report.applied + report.refunded + report.failed + report.pending > 0)
    logger.info('payment reconciliation done', report);
  return report;
}

/** The reconciler while serving: one pass every intervalMs, never two at once. */
export function startReconciler(deps: { plane: PaymentPlane; logger: Logger; intervalMs: number }): {
  stop(): Promise<void>;
} {
  let running: Promise<unknown> | null = null;
  let stopped = false;
  const timer = setInterval(() => {
    if (running || stopped) return;
    running = reconcilePayments(deps)
      .catch((err) => deps.logger.error('reconciler pass failed', { err }))
      .finally(() => {
        running = null;
      });
  }, deps.intervalMs);
  timer.unref();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
