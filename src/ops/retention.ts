import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { Db } from '../db/open.ts';
import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/logger.ts';
import type { Metrics } from '../lib/metrics.ts';
import { createOutboxPrune } from '../delivery/outbox.ts';
import { createReceiptPrune } from '../entitlements/receipts.ts';
import { createFailedPaymentPrune } from '../payments/store.ts';
import { createSiwxNoncePrune } from '../payments/siwx-signin.ts';

/**
 * Only rows nothing depends on are pruned: finished outbox rows, failed payments (nothing was
 * charged), receipt tokens whose wallet is owed nothing (a buyer can recover one by signing),
 * expired sign-in nonces; the ledger and money in flight never are. Deletes run in batches sized
 * to stay near TARGET_BATCH_MS (a row's cost depends on how scattered the old rows are).
 */
type RetentionSettings = {
  /** Days after its last change a sent or failed outbox row is kept; 0 keeps them forever. */
  outboxDays: number;
  /** Days a failed payment attempt is kept; 0 keeps them forever. */
  failedPaymentDays: number;
  /** Days a receipt token is kept once its wallet is owed nothing more; 0 keeps them forever. */
  receiptDays: number;
};

/** `maxBatchMs`: the longest single delete transaction, i.e. the longest the event loop was held. */
type RetentionReport = {
  outbox: number;
  failedPayments: number;
  receipts: number;
  siwxNonces: number;
  batches: number;
  maxBatchMs: number;
  ms: number;
};

const DAY_MS = 86_400_000;
const TARGET_BATCH_MS = 10;
const MIN_BATCH = 20;
const RETENTION_INTERVAL_MS = DAY_MS;

/** `batch`: the first batch's size and the largest any batch may grow to. */
export function createRetention(deps: {
  db: Db;
  clock: Clock;
  logger: Logger;
  settings: RetentionSettings;
  metrics?: Metrics;
  batch?: number;
}) {
  const { db, clock, logger, settings } = deps;
  const batch = deps.batch ?? 5_000;
  const q = {
    // Each table's owner holds its delete; this module owns the batching and the schedule.
    outbox: createOutboxPrune(db),
    // Only 'failed': any other status is the ledger or a payment whose outcome is not final.
    payments: createFailedPaymentPrune(db),
    receipts: createReceiptPrune(db),
    siwxNonces: createSiwxNoncePrune(db),
  };
  const pruned = deps.metrics?.counter(
    'isocast_retention_pruned_rows_total',
    'Rows removed by the daily retention prune, by table',
  );

  /** Deletes until a batch comes back short; returns the rows removed. */
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

  async function prune(): Promise<RetentionReport> {
    const started = performance.now();
    const now = clock.now();
    logger.info('retention prune started', { settings });
    const count = { batches: 0, maxBatchMs: 0 };
    const cutoff = (days: number) => now - days * DAY_MS;
    const outbox = settings.outboxDays > 0 ? await drain(q.outbox, cutoff(settings.outboxDays), count) : 0;
    const failedPayments =
      settings.failedPaymentDays > 0 ? await drain(q.payments, cutoff(settings.failedPaymentDays), count) : 0;
    const receipts = settings.receiptDays > 0 ? await drain(q.receipts, cutoff(settings.receiptDays), count) : 0;
    const siwxNonces = await drain(q.siwxNonces, now, count);
    pruned?.inc({ table: 'delivery_outbox' }, outbox);
    pruned?.inc({ table: 'payments' }, failedPayments);
    pruned?.inc({ table: 'receipts' }, receipts);
    pruned?.inc({ table: 'siwx_nonces' }, siwxNonces);
    const report = {
      outbox,
      failedPayments,
      receipts,
      siwxNonces,
      batches: count.batches,
      maxBatchMs: Math.round(count.maxBatchMs * 10) / 10,
      ms: Math.round(performance.now() - started),
    };
    logger.info('retention prune done', report);
    return report;
  }

  /**
   * Fresh planner statistics. Without them SQLite cannot tell that the partial index on queued
   * outbox rows is small, and scans instead. analysis_limit bounds the work on a large table.
   */
  function optimize(): void {
    const started = performance.now();
    db.pragma('analysis_limit = 400');
    db.pragma('optimize = 0x10002');
    logger.info('database optimized', { ms: Math.round(performance.now() - started) });
  }

  async function runOnce(): Promise<RetentionReport> {
    const report = await prune();
    optimize();
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
    prune,
    optimize,
    runOnce,
    /** Runs now and then every day; the timer does not keep the process alive. */
    start(): void {
      void guarded();
      timer = setInterval(() => {
        void guarded();
      }, RETENTION_INTERVAL_MS);
      timer.unref();
    },
    async stop(): Promise<void> {
      if (timer) clearInterval(timer);
      timer = null;
      await running;
    },
  };
}

export type Retention = ReturnType<typeof createRetention>;
