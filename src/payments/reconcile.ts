import type { Logger } from '../lib/logger.ts';
import type { PaymentPlane } from './plane.ts';
import type { PaymentRow } from './store.ts';

/**
 * Repair of open payments: at start (before the server listens) and on a timer while serving.
 * - `settled` (money moved, entitlement not applied): applied once now, or a refund is queued;
 * - `claimed` with no settle running (cut off by a crash or a shutdown) and `in_doubt`: the token
 *   contract's authorizationState decides. Used: the transfer is found and applied once. Unused
 *   past validBefore: failed, truly not charged. Anything else stays in doubt for the next pass;
 *   nothing is ever settled again without the buyer's header, and nothing is marked failed on a
 *   guess.
 */
type ReconcileReport = { applied: number; refunded: number; failed: number; pending: number };

/**
 * An in-doubt row whose settler sent nothing (`sent: false`: it could not read the chain before
 * sending) waits only for a competitor the buyer may have given the same authorization, or for
 * validBefore: no transfer of ours can land. Its stored `error` starts with this mark, as rows
 * of older databases do, and the reconciler takes such rows last. Written and read only here.
 */
const NOTHING_SENT = 'nothing sent: ';

/** The `error` text an in-doubt row is stored with. */
export const inDoubtNote = (o: { reason: string; sent?: boolean }): string =>
  o.sent === false ? `${NOTHING_SENT}${o.reason}` : o.reason;

const nothingSent = (r: PaymentRow): boolean => r.error?.startsWith(NOTHING_SENT) === true;

/** Chain lookups running at once in one pass: a slow RPC answer holds up only its own row. */
const RECONCILE_CONCURRENCY = 4;

/**
 * The order of one pass: `settled` rows first (no chain call, money already
 * moved), then rows where money may have moved (a transaction or a facilitator call went out, or a
 * claim was cut off), then rows where nothing was sent; oldest first within each. However many
 * junk rows are in doubt, a real one is looked at before any of them.
 */
function reconcileOrder(rows: PaymentRow[]): PaymentRow[] {
  const rank = (r: PaymentRow) => (r.status === 'settled' ? 0 : nothingSent(r) ? 2 : 1);
  return rows
    .map((r, i) => ({ r, i, k: rank(r) }))
    .sort((a, b) => a.k - b.k || a.i - b.i)
    .map((x) => x.r);
}

export async function reconcilePayments(deps: {
  plane: PaymentPlane;
  logger: Logger;
  concurrency?: number;
}): Promise<ReconcileReport> {
  const { plane, logger } = deps;
  const report: ReconcileReport = { applied: 0, refunded: 0, failed: 0, pending: 0 };
  const queue = reconcileOrder(plane.store.open());
  const step = async (row: PaymentRow) => {
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
      return;
    }
    if (result === 'busy') return;
    report[result]++;
    if (result === 'applied')
      logger.info('reconciled: payment applied', { paymentId: row.id, payer: row.payer, nonce: row.nonce });
    if (result === 'refunded')
      logger.warn('reconciled: refund queued', { paymentId: row.id, payer: row.payer, nonce: row.nonce });
  };
  // A few workers take rows off the ordered queue: the order decides who is asked first, the
  // bound keeps a pass from opening one RPC request per open row at once.
  let next = 0;
  const worker = async () => {
    while (next < queue.length) await step(queue[next++]!);
  };
  await Promise.all(Array.from({ length: Math.max(1, deps.concurrency ?? RECONCILE_CONCURRENCY) }, worker));
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
