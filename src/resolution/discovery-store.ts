import { EVENT_PREFIX } from '../cities/market-slug.ts';
import type { Db } from '../db/open.ts';
import { icaoOf, type DiscoveryVerdict } from './judge.ts';

/** The last discovery run's events and verdicts (`discovered_events`, replaced whole per run). */
export type DiscoveredRow = {
  slug: string;
  city: string;
  targetDate: string;
  source: string;
  kind: string | null;
  station: string | null;
  served: boolean;
  reason: string | null;
  seenAtMs: number;
};

export function createDiscoveryStore(db: Db) {
  const s = {
    clear: db.prepare('DELETE FROM discovered_events'),
    insert: db.prepare(
      'INSERT OR REPLACE INTO discovered_events (slug, city, target_date, source, kind, station, served, reason, seen_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
    ),
    all: db.prepare(
      `SELECT slug, city, target_date AS targetDate, source, kind, station, served, reason, seen_at AS seenAtMs
      FROM discovered_events ORDER BY served, city, target_date`,
    ),
  };
  return {
    replace(verdicts: readonly DiscoveryVerdict[], nowMs: number): void {
      db.transaction(() => {
        s.clear.run();
        for (const { slug, city, date, rule, served, reason } of verdicts)
          s.insert.run(slug, city, date, rule.source, rule.kind, icaoOf(rule.station), served ? 1 : 0, reason, nowMs);
      })();
    },
    /** Not served first, then by city and day. */
    all(): DiscoveredRow[] {
      const rows = s.all.all() as (Omit<DiscoveredRow, 'served'> & { served: number })[];
      return rows.map((r) => ({ ...r, served: r.served === 1 }));
    },
  };
}

/** Reasons that are the operator's choice (CITIES, MARKET_KINDS), not a problem to fix. */
const isChoice = (reason: string) => reason.startsWith('observable, but') || reason.includes('MARKET_KINDS=');

type ReasonGroup = { reason: string; count: number; cities: string[] };

export function groupByReason(rows: readonly { city: string; reason: string }[]): ReasonGroup[] {
  const byReason = new Map<string, Set<string>>();
  for (const r of rows) byReason.set(r.reason, (byReason.get(r.reason) ?? new Set()).add(r.city));
  // Most common first; a reason alone with one city (often the one to fix) still gets its own line.
  return [...byReason]
    .map(([reason, cities]) => ({ reason, count: cities.size, cities: [...cities].sort() }))
    .sort((a, b) => b.count - a.count || a.reason.localeCompare(b.reason));
}

/** "31 streams: observable, but CITIES=spec ...: amsterdam, ankara, ..." */
export function reasonLine(g: ReasonGroup): string {
  return `${g.count} stream${g.count === 1 ? '' : 's'}: ${g.reason}: ${g.cities.join(', ')}`;
}

/** `doctor`: streams not served, one line per reason; a warning only when the operator's choice did not leave them out. */
export function discoveryCheck(db: Db): { status: 'ok' | 'warn'; detail: string } {
  const rows = createDiscoveryStore(db).all();
  if (rows.length === 0) return { status: 'ok', detail: 'no discovery run recorded yet' };
  const served = new Set(rows.filter((r) => r.served).map((r) => r.city));
  const notServed = rows
    .filter((r) => !r.served && !served.has(r.city))
    .map((r) => ({ city: r.city, reason: r.reason ?? 'not served' }));
  const lows = rows.filter((r) => r.slug.startsWith(`${EVENT_PREFIX.low}-`)).length;
  const head = `${rows.length} daily-temperature events (${rows.length - lows} high, ${lows} low), ${served.size} stream${served.size === 1 ? '' : 's'} served`;
  if (notServed.length === 0) return { status: 'ok', detail: `${head}; every discovered stream is served` };
  const groups = groupByReason(notServed);
  const wanted = groups.some((g) => !isChoice(g.reason));
  return { status: wanted ? 'warn' : 'ok', detail: [`${head}; not served:`, ...groups.map(reasonLine)].join('\n') };
}
export type DiscoveryStore = ReturnType<typeof createDiscoveryStore>;
