import type { Hex, Address } from 'viem';
import type { Logger } from '../lib/logger.ts';
import type { Clock } from '../lib/clock.ts';
import type { PaymentPlane } from './plane.ts';
import type { Settler } from './settlers/settler.ts';

/**
 * Start-up repair of payments a crash left open, run before the server listens:
 * - `settled` (money moved, entitlement not applied): applied once now, or a refund is queued;
 * - `claimed` (the settle call was under way): the settler is asked whether money moved; if so
 *   the payment is recorded and applied, if not it is released (`failed`, not charged) so the
 *   same authorization can be retried; when the settler cannot tell (facilitator) it is released
 *   too and logged as a warning for the operator.
 */
export type ReconcileReport = { applied: number; refunded: number; released: number; unknown: number };

export async function reconcilePayments(deps: { plane: PaymentPlane; settler: Settler; clock: Clock; logger: Logger }): Promise<ReconcileReport> {
  const { plane, logger } = deps;
  const report: ReconcileReport = { applied: 0, refunded: 0, released: 0, unknown: 0 };
  const applyOrRefund = (id: number, run: () => unknown) => {
    try {
      run();
      report.applied++;
      logger.info('reconciled: payment applied', { paymentId: id });
    } catch {
      report.refunded++;
      logger.warn('reconciled: refund queued', { paymentId: id });
    }
  };
  for (const row of plane.store.open()) {
    if (row.status === 'settled') {
      applyOrRefund(row.id, () => plane.apply(row.id, false));
      continue;
    }
    let lookup;
    try {
      lookup = await deps.settler.lookup(row.payer as Address, row.nonce as Hex);
    } catch (err) {
      logger.warn('reconcile: settlement lookup failed; payment left claimed', { paymentId: row.id, err });
      continue;
    }
    if ('found' in lookup && lookup.found) {
      const txHash = lookup.found;
      applyOrRefund(row.id, () => plane.recordAndApply(row.id, txHash, false));
    } else if ('unknown' in lookup) {
      plane.store.markFailed(row.id, 'interrupted during settlement; outcome unknown', deps.clock.now());
      report.unknown++;
      logger.warn('reconciled: settlement outcome unknown; released for retry', { paymentId: row.id, payer: row.payer, settler: row.settler });
    } else {
      plane.store.markFailed(row.id, 'interrupted before settlement; not charged', deps.clock.now());
      report.released++;
      logger.info('reconciled: claim released, not charged', { paymentId: row.id });
    }
  }
  if (report.applied + report.refunded + report.released + report.unknown > 0) logger.info('payment reconciliation done', report);
  return report;
}
