import type { Db } from '../db/open.ts';
import type { Catalog } from '../cities/catalog.ts';
import { EVENT_PREFIX } from '../cities/market-slug.ts';
import { microToUsd } from '../lib/money.ts';
import type { DayRule, RuleStore } from '../resolution/store.ts';
import { groupByReason, type DiscoveredRow, type DiscoveryStore } from '../resolution/store.ts';
import type { PollerHealth } from '../poller/health.ts';
import type { AdminDataBody } from './schemas.ts';
import type { SignalReader } from '../signals/read-store.ts';
import type { SignalStore } from '../signals/store.ts';
import { LATENCY_MAX_ROWS, LATENCY_SPAN_MS, latencyWindows } from '../signals/latency.ts';
import type { EntitlementStore } from '../entitlements/store.ts';
import { createOutboxCounts, createOutboxRecent } from '../delivery/outbox.ts';
import { createPaymentReads } from '../payments/store.ts';
import type { ReplicaStatus } from '../replication/tracker.ts';
import type { FacilitatorHealth } from '../payments/settlers/failover.ts';

/** Lists LIMITed on an index, totals from counters or partial indexes: flat as history grows (but queued refunds). */
const LIMITS = { revenueDays: 30, payments: 50, refunds: 200, entitlements: 100, deliveries: 50 } as const;

export type ReportDeps = {
  db: Db;
  stores: {
    reader: Pick<SignalReader, 'latestSeqAll' | 'latencyRows'>;
    signals: Pick<SignalStore, 'latestReadings'>;
    entitlements: Pick<EntitlementStore, 'recent' | 'count'>;
    rules: Pick<RuleStore, 'latest'>;
    discovery: Pick<DiscoveryStore, 'all'>;
  };
  catalog: Catalog;
  paymentMode: 'mock' | 'live';
  feed: 'sim' | 'live';
  pollerHealth?: () => PollerHealth;
  /** The replica's state (src/replication/), when REPLICA_URL is set. */
  replication?: () => ReplicaStatus & { replica: string };
  /** Each facilitator's health (payments/settlers/failover.ts), when payments settle through them. */
  facilitators?: () => FacilitatorHealth[];
};

const DAY_MS = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString();
const isoOrNull = (ms: number | null) => (ms === null ? null : iso(ms));

export function createAdminReport(deps: ReportDeps): (nowMs: number) => AdminDataBody {
  const { db, stores } = deps;
  const payments = createPaymentReads(db);
  const outboxCounts = createOutboxCounts(db);
  const outboxRecent = createOutboxRecent(db);

  // One read transaction: every section describes the same committed state.
  return (nowMs) =>
    db.transaction(() => {
      const latest = stores.reader.latestSeqAll();
      const applied = payments.appliedTotals();
      const refundTotals = payments.queuedRefundTotals();
      const doubt = payments.inDoubt();
      const since = (Math.floor(nowMs / DAY_MS) - (LIMITS.revenueDays - 1)) * DAY_MS;
      return {
        generatedAt: iso(nowMs),
        paymentMode: deps.paymentMode,
        feed: deps.feed,
        totals: {
          revenueMicro: applied.micro,
          revenueUsd: microToUsd(applied.micro),
          appliedPayments: applied.n,
          refundsQueued: refundTotals.n,
          refundsQueuedMicro: refundTotals.micro,
          inDoubtPayments: doubt.n,
          oldestInDoubtSeconds: doubt.oldest === null ? null : Math.max(0, Math.floor((nowMs - doubt.oldest) / 1000)),
          // Seqs run 1..latest without gaps per city (invariant 1) and signals are never pruned.
          signals: [...latest.values()].reduce((a, b) => a + b, 0),
          entitlements: stores.entitlements.count(),
        },
        revenueByDay: payments.revenueSince(since).map((r) => ({
          day: iso(r.dayNumber * DAY_MS).slice(0, 10),
          city: r.city,
          payments: r.payments,
          micro: r.micro,
          usd: microToUsd(r.micro),
        })),
        recentPayments: payments.recent(LIMITS.payments).map(shown) as AdminDataBody['recentPayments'],
        refunds: payments.queuedRefunds(LIMITS.refunds).map(shown) as AdminDataBody['refunds'],
        entitlements: stores.entitlements.recent(LIMITS.entitlements).map((r) => ({
          wallet: r.wallet,
          city: r.city,
          paidThroughSeq: r.paidThroughSeq,
          totalPaidSignals: r.totalPaidSignals,
          latestSeq: latest.get(r.city) ?? 0,
          updatedAt: iso(r.updatedAtMs),
        })),
        deliveries: {
          counts: outboxCounts(),
          recent: outboxRecent(LIMITS.deliveries).map(shown) as AdminDataBody['deliveries']['recent'],
        },
        replication: replicationOf(deps.replication?.()),
        facilitators: (deps.facilitators?.() ?? []).map(({ downSinceMs, ...f }) => ({
          ...f,
          downSince: isoOrNull(downSinceMs),
        })),
        poller: pollerOf(deps, latest),
        discovery: discoveryOf(stores.discovery.all(), deps.catalog),
        latency: latencyWindows(stores.reader.latencyRows(nowMs - LATENCY_SPAN_MS, LATENCY_MAX_ROWS).rows, nowMs),
      };
    })();
}

/** A row as the page shows it: camelCase (`payer` as `wallet`), `*_at` as ISO, USD beside `amount_micro`. */
function shown(row: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(row)) {
    const name = k === 'payer' ? 'wallet' : k.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
    out[name] = k.endsWith('_at') ? iso(v as number) : v;
    if (k === 'amount_micro') out.amountUsd = microToUsd(v as number);
  }
  return out;
}

/** Per city: its seq, last reading, poll health and day rule; then the paused days. */
function pollerOf({ catalog, pollerHealth, stores }: ReportDeps, latest: Map<string, number>): AdminDataBody['poller'] {
  const health = pollerHealth?.();
  const readings = stores.signals.latestReadings();
  const rules = stores.rules.latest();
  const byCity = new Map(health?.cities.map((c) => [c.city, c]));
  const slugs = health ? health.cities.map((c) => c.city) : catalog.active.map((c) => c.slug);
  const name = (slug: string) => catalog.get(slug)?.displayName ?? slug;
  return {
    running: health !== undefined,
    lastTick: health?.lastTick ? tickOf(health.lastTick) : null,
    cities: slugs.map((slug) => {
      const h = byCity.get(slug);
      const r = readings.get(slug);
      return {
        city: slug,
        displayName: name(slug),
        latestSeq: latest.get(slug) ?? 0,
        lastReading: r
          ? { targetDate: r.targetDate, high: r.high, unit: r.unit, bucket: r.bucket, at: iso(r.updatedAtMs) }
          : null,
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
  };
}

function tickOf({ startedAtMs, ...tick }: NonNullable<PollerHealth['lastTick']>) {
  return { startedAt: iso(startedAtMs), ...tick };
}

/** The day's rule as the page shows it: without the city (the row's), the rule kind or the page URL. */
function ruleOf(r: DayRule | undefined) {
  if (!r) return null;
  const { city: _city, kind: _kind, url: _url, ...shown } = r;
  return shown;
}

function discoveryOf(rows: DiscoveredRow[], catalog: Catalog): AdminDataBody['discovery'] {
  const served = catalog.active.map((c) => c.slug);
  const isServed = new Set(served);
  const sel = catalog.selection;
  const notServed = rows
    .filter((r) => !r.served && !isServed.has(r.city))
    .map((r) => ({
      city: r.city,
      kind: r.slug.startsWith(`${EVENT_PREFIX.low}-`) ? ('low' as const) : ('high' as const),
      targetDate: r.targetDate,
      slug: r.slug,
      reason: r.reason ?? 'not served',
    }));
  return {
    at: rows.length > 0 ? iso(Math.max(...rows.map((r) => r.seenAtMs))) : null,
    selection: sel.mode === 'list' ? sel.slugs.join(',') : sel.mode,
    events: rows.length,
    served,
    notServed,
    notServedByReason: groupByReason(notServed),
  };
}

function replicationOf(r: (ReplicaStatus & { replica: string }) | undefined): AdminDataBody['replication'] {
  if (!r) return null;
  const { replica, up, lagMs, lastSyncAt, failures, lastError } = r;
  return { replica, up, lagMs: Math.round(lagMs), lastSyncAt: isoOrNull(lastSyncAt), failures, lastError };
}
