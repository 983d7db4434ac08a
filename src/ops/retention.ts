import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { Db } from '../db/open.ts';
import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/logger.ts';
import type { Metrics } from '../lib/metrics.ts';
import { createOutboxPrune } from '../delivery/outbox.ts';
import { createReceiptPrune } from '../entitlements/receipts.ts';
import { createFailedPaymentPrune } from '../payments/store.ts';
import { createSiwxNoncePrune } from '../payments/siwx.ts';

/**
 * Only rows nothing depends on are pruned, never the ledger or money in flight; settings: days kept, 0 forever.
 * Batches stay near TARGET_BATCH_MS: a row's cost depends on how scattered the old rows are.
 */
const DAY_MS = 86_400_000;
const TARGET_BATCH_MS = 10;
const MIN_BATCH = 20;

/** `batch`: the first batch's size and the largest any batch may grow to. */
export function createRetention(deps: {
  db: Db;
  clock: Clock;
  logger: Logger;
  settings: { outboxDays: number; failedPaymentDays: number; receiptDays: number };
  metrics?: Metrics;
  batch?: number;
}) {
  const { db, clock, logger, settings } = deps;
  const batch = deps.batch ?? 5_000;
  // Each table's owner holds its delete (payments: only 'failed'); this module batches and schedules.
  // [report field, metric label, delete, days kept (0: forever; null: until it expires)]
  const tables = [
    ['outbox', 'delivery_outbox', createOutboxPrune(db), settings.outboxDays],
    ['failedPayments', 'payments', createFailedPaymentPrune(db), settings.failedPaymentDays],
    ['receipts', 'receipts', createReceiptPrune(db), settings.receiptDays],
    ['siwxNonces', 'siwx_nonces', createSiwxNoncePrune(db), null],
  ] as const;
  const pruned = deps.metrics?.counter(
    'isocast_retention_pruned_rows_total',
    'Rows removed by the daily retention prune, by table',
  );

  async function drain(
    stmt: { run(...a: unknown[]): { changes: number } },
    cutoff: number,
    count: { batches: number; maxBatchMs: number },
  ): Promise<number> {
    let total = 0;
    // Small first: the first batch may find its pages cold on disk.
    let size = Math.min(batch, 100);
    for (;;) {
      const t0 = performance.now();
      const n = db.transaction(() => stmt.run(cutoff, size).changes)();
      const ms = performance.now() - t0;
      count.maxBatchMs = Math.max(count.maxBatchMs, ms);
      total += n;
      count.batches++;
      if (n < size) return total;
      if (ms > 2 * TARGET_BATCH_MS) size = Math.max(Math.min(MIN_BATCH, batch), Math.floor(size / 2));
      else if (ms < TARGET_BATCH_MS / 2) size = Math.min(batch, size * 2);
      await yieldToLoop();
    }
  }

  /** The prune, then planner statistics (without them SQLite scans instead of the small partial outbox index). */
  async function runOnce() {
    let started = performance.now();
    const now = clock.now();
    logger.info('retention prune started', { settings });
    const count = { batches: 0, maxBatchMs: 0 };
    const rows = {} as Record<(typeof tables)[number][0], number>;
    for (const [field, , stmt, days] of tables)
      rows[field] =
        days === null ? await drain(stmt, now, count) : days > 0 ? await drain(stmt, now - days * DAY_MS, count) : 0;
    for (const [field, table] of tables) pruned?.inc({ table }, rows[field]);
    const report = {
      ...rows,
      batches: count.batches,
      maxBatchMs: Math.round(count.maxBatchMs * 10) / 10,
      ms: Math.round(performance.now() - started),
    };
    logger.info('retention prune done', report);
    started = performance.now();
    db.pragma('analysis_limit = 400');
    db.pragma('optimize = 0x10002');
    logger.info('database optimized', { ms: Math.round(performance.now() - started) });
    return report;
  }

  let timer: NodeJS.Timeout | null = null;
  let running: Promise<unknown> | null = null;
  const guarded = () => {
    running ??= runOnce()
      .catch((err: unknown) => logger.error('retention prune failed', { err }))
      .finally(() => {
        running = null;
      });
    return running;
  };
  return {
    runOnce,
    /** Runs now and then every day; the timer does not keep the process alive. */
    start(): void {
      void guarded();
      timer = setInterval(() => {
        void guarded();
      }, DAY_MS);
      timer.unref();
    },
    async stop(): Promise<void> {
      if (timer) clearInterval(timer);
      timer = null;
      await running;
    },
  };
}
