import type { Logger } from '../lib/logger.ts';
import type { PaymentPlane } from './plane.ts';
import { rowFields, type PaymentRow } from './store.ts';

/** The `error` mark of an in-doubt row whose settler sent nothing: no transfer of ours can land. */
const NOTHING_SENT = 'nothing sent: ';

export const inDoubtNote = (o: { reason: string; sent?: boolean }): string =>
  o.sent === false ? `${NOTHING_SENT}${o.reason}` : o.reason;

const nothingSent = (r: PaymentRow): boolean => r.error?.startsWith(NOTHING_SENT) === true;

/** Chain lookups running at once in one pass: a slow RPC answer holds up only its own row. */
const RECONCILE_CONCURRENCY = 4;

/** `settled` first (no chain call), nothing-sent junk last, oldest first within each (a stable sort). */
const rank = (r: PaymentRow) => (r.status === 'settled' ? 0 : nothingSent(r) ? 2 : 1);

/** Repair of open payments at start and on a timer; the rules are docs/payments.md "Reconciliation". */
export async function reconcilePayments(deps: { plane: PaymentPlane; logger: Logger }) {
  const { plane, logger } = deps;
  const report = { applied: 0, refunded: 0, failed: 0, pending: 0 };
  const queue = plane.store.open().sort((a, b) => rank(a) - rank(b));
  const step = async (row: PaymentRow) => {
    let result: Awaited<ReturnType<PaymentPlane['reconcile']>>;
    try {
      result = await plane.reconcile(row);
    } catch (err) {
      logger.error('reconcile step failed; payment left as it was', { ...rowFields(row), txHash: row.tx_hash, err });
      report.pending++;
      return;
    }
    if (result === 'busy') return;
    report[result]++;
    const fields = { paymentId: row.id, payer: row.payer, nonce: row.nonce };
    if (result === 'applied') logger.info('reconciled: payment applied', fields);
    if (result === 'refunded') logger.warn('reconciled: refund queued', fields);
  };
  // A few workers on the ordered queue: a pass never opens one RPC request per open row at once.
  let next = 0;
  const worker = async () => {
    while (next < queue.length) await step(queue[next++]!);
  };
  await Promise.all(Array.from({ length: RECONCILE_CONCURRENCY }, worker));
  if (report.applied + report.refunded + report.failed + report.pending > 0)
    logger.info('payment reconciliation done', report);
  return report;
}

/** The reconciler while serving: one pass every intervalMs, never two at once. */
export function startReconciler(deps: { plane: PaymentPlane; logger: Logger; intervalMs: number }) {
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
