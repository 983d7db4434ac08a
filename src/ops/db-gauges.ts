import type { Db } from '../db/open.ts';
import type { Metrics } from '../lib/metrics.ts';
import { createOutboxCounts, type OutboxStatus } from '../delivery/outbox.ts';
import { createPaymentReads } from '../payments/store.ts';

/**
 * Read at scrape time, not counted in memory: durable state must survive a restart and show
 * another process's changes. Trigger-kept counters and the partial index payments_open keep a
 * scrape flat as history grows; refunds are scanned (rare rows).
 */
const OUTBOX_STATUSES: readonly OutboxStatus[] = ['queued', 'sending', 'sent', 'failed'];
const OPEN_PAYMENT_STATUSES = ['claimed', 'settled', 'in_doubt'] as const;

export function registerDbGauges(metrics: Metrics, db: Db, now: () => number = Date.now): void {
  const payments = createPaymentReads(db);
  const outbox = createOutboxCounts(db);

  const refundCount = metrics.gauge(
    'isocast_refunds_queued',
    'Refunds owed for settled payments whose entitlement could not be applied',
  );
  const refundMicro = metrics.gauge('isocast_refunds_queued_micro_usdc', 'Micro-USDC owed by queued refunds');
  const outboxRows = metrics.gauge('isocast_delivery_outbox_rows', 'Delivery outbox rows by status');
  const openPayments = metrics.gauge(
    'isocast_payments_open',
    'Payments claimed, settled or in doubt but not yet applied (in flight, or waiting for the reconciler)',
  );
  const doubtAge = metrics.gauge(
    'isocast_payments_in_doubt_oldest_age_seconds',
    'Age of the oldest payment whose settlement outcome is in doubt (0 when none)',
  );

  metrics.collect(() => {
    const r = payments.queuedRefundTotals();
    refundCount.set(r.n);
    refundMicro.set(r.micro);
    const byStatus = outbox();
    for (const status of OUTBOX_STATUSES) outboxRows.set(byStatus[status], { status });
    const openBy = new Map(payments.openByStatus().map((x) => [x.status, x.n]));
    for (const status of OPEN_PAYMENT_STATUSES) openPayments.set(openBy.get(status) ?? 0, { status });
    const oldest = payments.inDoubt().oldest;
    doubtAge.set(oldest === null ? 0 : Math.max(0, Math.floor((now() - oldest) / 1000)));
  });
}
