import type { Catalog } from '../cities/catalog.ts';
import { EVENT_PREFIX } from '../cities/market-slug.ts';
import type { DayRule } from '../resolution/store.ts';
import { groupByReason, type DiscoveredRow } from '../resolution/discovery-store.ts';
import type { PollerHealth } from '../poller/health.ts';
import type { LatestReading } from '../signals/store.ts';
import type { ReplicaStatus } from '../replication/tracker.ts';
import type { AdminDataBody } from './schemas.ts';

export const iso = (ms: number) => new Date(ms).toISOString();
export const isoOrNull = (ms: number | null) => (ms === null ? null : iso(ms));

type PollerReads = {
  latest: Map<string, number>;
  readings: Map<string, LatestReading>;
  rules: Map<string, DayRule>;
};

/** Per city: its seq, last reading, poll health and day rule; then the paused days. */
export function pollerOf(
  catalog: Catalog,
  health: PollerHealth | undefined,
  { latest, readings, rules }: PollerReads,
): AdminDataBody['poller'] {
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

export function discoveryOf(rows: DiscoveredRow[], catalog: Catalog): AdminDataBody['discovery'] {
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

export function replicationOf(r: (ReplicaStatus & { replica: string }) | undefined): AdminDataBody['replication'] {
  if (!r) return null;
  const { replica, up, lagMs, lastSyncAt, failures, lastError } = r;
  return { replica, up, lagMs: Math.round(lagMs), lastSyncAt: isoOrNull(lastSyncAt), failures, lastError };
}
