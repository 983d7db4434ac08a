import type { Db } from '../db/open.ts';
import type { Catalog } from '../cities/catalog.ts';
import { EVENT_PREFIX } from '../cities/market-slug.ts';
import { microToUsd } from '../lib/money.ts';
import { createRuleStore, type DayRule } from '../resolution/store.ts';
import { createDiscoveryStore, type DiscoveredRow } from '../resolution/discovery-store.ts';
import type { PollerHealth } from '../poller/health.ts';
import type { AdminDataBody } from './schemas.ts';
import { createSignalReader } from '../signals/read-store.ts';
import { createSignalStore } from '../signals/store.ts';
import { createEntitlementStore } from '../entitlements/store.ts';
import { createOutboxCounts, createOutboxRecent } from '../delivery/outbox.ts';
import { createPaymentReads } from '../payments/store.ts';
import type { ReplicaStatus } from '../replication/tracker.ts';

/**
 * Builds the operator page's data from the database and the poller's in-memory state, read-only.
 * Signals, day state, entitlements, resolution rules, the outbox, payments and refunds come from
 * their owners (payments/store.ts createPaymentReads for the last two). What a
 * request costs: the lists are LIMITed on an index and the totals come from trigger-kept
 * counters (row_counts) or partial indexes, so those stay flat as history grows; the per-city
 * parts grow with cities, revenue with the last 30 days' applied payments, and two reads still
 * grow with history: queued refunds (refunds has no status index) and the newest reading per city
 * (one pass over day_state, a row per city-day).
 */
export const LIMITS = { revenueDays: 30, payments: 50, refunds: 200, entitlements: 100, deliveries: 50 } as const;

export type ReportDeps = {
  db: Db;
  catalog: Catalog;
  paymentMode: 'mock' | 'live';
  feed: 'sim' | 'live';
  pollerHealth?: () => PollerHealth;
  /** The replica's state (src/replication/), when REPLICA_URL is set. */
  replication?: () => ReplicaStatus & { replica: string };
};

const DAY_MS = 86_400_000;

function discoveryOf(rows: DiscoveredRow[], catalog: Catalog): AdminDataBody['discovery'] {
  const served = catalog.active.map((c) => c.slug);
  const isServed = new Set(served);
  const sel = catalog.selection;
  return {
    at: rows.length > 0 ? new Date(Math.max(...rows.map((r) => r.seenAtMs))).toISOString() : null,
    selection: sel.mode === 'list' ? sel.slugs.join(',') : sel.mode,
    events: rows.length,
    served,
    notServed: rows
      .filter((r) => !r.served && !isServed.has(r.city))
      .map((r) => ({
        city: r.city,
        kind: r.slug.startsWith(`${EVENT_PREFIX.low}-`) ? ('low' as const) : ('high' as const),
        targetDate: r.targetDate,
        slug: r.slug,
        reason: r.reason ?? 'not served',
      })),
  };
}

function ruleOf(r: DayRule | undefined) {
  if (!r) return null;
  return {
    targetDate: r.targetDate,
    source: r.source,
    station: r.station,
    unit: r.unit,
    precision: r.precision,
    fallback: r.fallback,
    status: r.status,
    reason: r.reason,
    observedWith: r.observedWith,
  };
}
type PaymentOut = AdminDataBody['recentPayments'][number];
type PaymentRow = Pick<PaymentOut, 'id' | 'city' | 'count' | 'settler' | 'status' | 'error'> & {
  created_at: number;
  payer: string;
  amount_micro: number;
  tx_hash: PaymentOut['txHash'];
};
type RefundOut = AdminDataBody['refunds'][number];
type RefundRow = Pick<RefundOut, 'id' | 'wallet' | 'reason' | 'status'> & {
  payment_id: number;
  created_at: number;
  amount_micro: number;
  tx_hash: RefundOut['txHash'];
};
const iso = (ms: number) => new Date(ms).toISOString();
const isoOrNull = (ms: number | null) => (ms === null ? null : iso(ms));

function replicationOf(r: (ReplicaStatus & { replica: string }) | undefined): AdminDataBody['replication'] {
  if (!r) return null;
  const { replica, up, lagMs, lastSyncAt, failures, lastError } = r;
  return { replica, up, lagMs: Math.round(lagMs), lastSyncAt: isoOrNull(lastSyncAt), failures, lastError };
}

export function createAdminReport(deps: ReportDeps): (nowMs: number) => AdminDataBody {
  const { db } = deps;
  const payments = createPaymentReads(db);
  const signals = createSignalReader(db);
  const signalStore = createSignalStore(db);
  const entitlements = createEntitlementStore(db);
  const dayRules = createRuleStore(db);
  const discovered = createDiscoveryStore(db);
  const outboxCounts = createOutboxCounts(db);
  const outboxRecent = createOutboxRecent(db);

  return (nowMs) => {
    // One read transaction: every section describes the same committed state.
    return db.transaction(() => {
      const latest = signals.latestSeqAll();
      const readings = new Map(
        [...signalStore.latestReadings()].map(([city, r]) => [
          city,
          { targetDate: r.targetDate, high: r.high, unit: r.unit, bucket: r.bucket, at: iso(r.updatedAtMs) },
        ]),
      );
      const totals = payments.appliedTotals();
      const refundTotals = payments.queuedRefundTotals();
      const doubt = payments.inDoubt();
      const since = (Math.floor(nowMs / DAY_MS) - (LIMITS.revenueDays - 1)) * DAY_MS;

      const counts = outboxCounts();

      const health = deps.pollerHealth?.();
      const byCity = new Map(health?.cities.map((c) => [c.city, c]));
      const slugs = health ? health.cities.map((c) => c.city) : deps.catalog.active.map((c) => c.slug);
      const rules = dayRules.latest();
      const name = (slug: string) => deps.catalog.get(slug)?.displayName ?? slug;

      return {
        generatedAt: iso(nowMs),
        paymentMode: deps.paymentMode,
        feed: deps.feed,
        totals: {
          revenueMicro: totals.micro,
          revenueUsd: microToUsd(totals.micro),
          appliedPayments: totals.n,
          refundsQueued: refundTotals.n,
          refundsQueuedMicro: refundTotals.micro,
          inDoubtPayments: doubt.n,
          oldestInDoubtSeconds: doubt.oldest === null ? null : Math.max(0, Math.floor((nowMs - doubt.oldest) / 1000)),
          // Seqs run 1..latest without gaps per city (invariant 1) and signals are never pruned.
          signals: [...latest.values()].reduce((a, b) => a + b, 0),
          entitlements: entitlements.count(),
        },
        revenueByDay: payments.revenueSince(since).map((r) => ({
          day: iso(r.dayNumber * DAY_MS).slice(0, 10),
          city: r.city,
          payments: r.payments,
          micro: r.micro,
          usd: microToUsd(r.micro),
        })),
        recentPayments: (payments.recent(LIMITS.payments) as PaymentRow[]).map((r) => ({
          id: r.id,
          createdAt: iso(r.created_at),
          wallet: r.payer,
          city: r.city,
          count: r.count,
          amountMicro: r.amount_micro,
          amountUsd: microToUsd(r.amount_micro),
          settler: r.settler,
          txHash: r.tx_hash,
          status: r.status,
          error: r.error,
        })),
        refunds: (payments.queuedRefunds(LIMITS.refunds) as RefundRow[]).map((r) => ({
          id: r.id,
          paymentId: r.payment_id,
          createdAt: iso(r.created_at),
          wallet: r.wallet,
          amountMicro: r.amount_micro,
          amountUsd: microToUsd(r.amount_micro),
          txHash: r.tx_hash,
          reason: r.reason,
          status: r.status,
        })),
        entitlements: entitlements.recent(LIMITS.entitlements).map((r) => ({
          wallet: r.wallet,
          city: r.city,
          paidThroughSeq: r.paidThroughSeq,
          totalPaidSignals: r.totalPaidSignals,
          latestSeq: latest.get(r.city) ?? 0,
          updatedAt: iso(r.updatedAtMs),
        })),
        deliveries: {
          counts,
          recent: outboxRecent(LIMITS.deliveries).map((r) => ({
            id: r.id,
            wallet: r.wallet,
            city: r.city,
            targetDate: r.target_date,
            bucket: r.bucket,
            seq: r.seq,
            status: r.status,
            attempts: r.attempts,
            lastError: r.last_error,
            updatedAt: iso(r.updated_at),
          })),
        },
        replication: replicationOf(deps.replication?.()),
        poller: {
          running: health !== undefined,
          lastTick: health?.lastTick
            ? {
                startedAt: iso(health.lastTick.startedAtMs),
                durationMs: health.lastTick.durationMs,
                signals: health.lastTick.signals,
                errors: health.lastTick.errors,
              }
            : null,
          cities: slugs.map((slug) => {
            const h = byCity.get(slug);
            return {
              city: slug,
              displayName: deps.catalog.get(slug)?.displayName ?? slug,
              latestSeq: latest.get(slug) ?? 0,
              lastReading: readings.get(slug) ?? null,
              lastAttemptAt: isoOrNull(h?.lastAttemptAtMs ?? null),
              lastOkAt: isoOrNull(h?.lastOkAtMs ?? null),
              lastError: h?.lastError ?? null,
              lastErrorAt: isoOrNull(h?.lastErrorAtMs ?? null),
              failures: h?.failures ?? 0,
              retryAt: isoOrNull(h?.retryAtMs ?? null),
              noMarket: h?.noMarket ?? false,
              rule: ruleOf(rules.get(slug)),
            };
          }),
          paused: slugs.flatMap((slug) => {
            const r = rules.get(slug);
            return r?.status === 'paused'
              ? [{ city: slug, displayName: name(slug), targetDate: r.targetDate, reason: r.reason ?? 'paused' }]
              : [];
          }),
        },
        discovery: discoveryOf(discovered.all(), deps.catalog),
      };
    })();
  };
}
