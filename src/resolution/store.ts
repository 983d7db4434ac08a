import { EVENT_PREFIX } from '../cities/market-slug.ts';
import type { Db } from '../db/open.ts';
import { addDays } from '../lib/local-day.ts';
import type { ResolutionRule } from '../sources/market/resolution-rule.ts';
import { describeRule, icaoOf, type DiscoveryVerdict, type Verdict } from './judge.ts';

/**
 * Each city-day's rule and verdict. The first rule seen is kept: another rule or feed later pauses
 * the day, so its signals never mix sources; any other pause is re-judged every tick.
 */
export type DayRule = Pick<
  ResolutionRule,
  'source' | 'kind' | 'station' | 'unit' | 'precision' | 'fallback' | 'url'
> & {
  city: string;
  targetDate: string;
  status: 'ok' | 'paused';
  reason: string | null;
  /** The feed the day's signals come from; null until one is chosen. */
  observedWith: string | null;
};

const COLUMNS =
  'city, target_date AS targetDate, source, kind, station, unit, precision, fallback, url, status, pause_reason AS reason, observed_with AS observedWith';

const RULE_FIELDS = ['source', 'kind', 'station', 'unit', 'precision', 'fallback'] as const;

// A day recorded before 0010 has no kind; the first read that states one does not pause it.
const sameRule = (r: DayRule, rule: ResolutionRule): boolean =>
  RULE_FIELDS.every((k) => r[k] === rule[k] || (k === 'kind' && r.kind === null));

type SettleInput = {
  city: string;
  date: string;
  rule: ResolutionRule;
  verdict: Verdict;
  feed: string | null;
  nowMs: number;
};

export type RuleStore = ReturnType<typeof createRuleStore>;

export function createRuleStore(db: Db) {
  const s = {
    get: db.prepare(`SELECT ${COLUMNS} FROM resolution_rules WHERE city = ? AND target_date = ?`),
    insert:
      db.prepare(`INSERT INTO resolution_rules (city, target_date, source, kind, station, unit, precision, fallback,
      url, parse_note, status, pause_reason, observed_with, first_seen_at, updated_at) VALUES (@city, @targetDate, @source,
      @kind, @station, @unit, @precision, @fallback, @url, @parseNote, @status, @reason, @observedWith, @nowMs, @nowMs)`),
    update: db.prepare(
      'UPDATE resolution_rules SET status = ?, pause_reason = ?, observed_with = ?, updated_at = ? WHERE city = ? AND target_date = ?',
    ),
    latest: db.prepare(`SELECT ${COLUMNS} FROM resolution_rules r
      WHERE target_date = (SELECT max(target_date) FROM resolution_rules x WHERE x.city = r.city)`),
    paused: db.prepare(
      `SELECT ${COLUMNS} FROM resolution_rules WHERE status = 'paused' AND target_date >= ? ORDER BY target_date DESC, city LIMIT +?`,
    ),
  };
  return {
    /** Records the day's rule and verdict (one transaction) and says whether the day just became paused. */
    settle: (input: SettleInput): DayRule & { newlyPaused: boolean } =>
      db.transaction(() => {
        const row = s.get.get(input.city, input.date) as DayRule | undefined;
        const { rule, verdict } = input;
        if (!row) {
          const ok = verdict.status === 'ok';
          // The rule's own fields spread: the insert binds the columns it names and ignores the rest.
          const next: DayRule = {
            ...rule,
            city: input.city,
            targetDate: input.date,
            status: verdict.status,
            reason: ok ? null : verdict.reason,
            observedWith: ok ? input.feed : null,
          };
          s.insert.run({ ...next, parseNote: rule.reason ?? null, nowMs: input.nowMs });
          return { ...next, newlyPaused: !ok };
        }
        const reason = !sameRule(row, rule)
          ? `rule changed during the day: ${describeRule(row)} first, now ${describeRule(rule)}`
          : verdict.status === 'paused'
            ? verdict.reason
            : row.observedWith !== null && row.observedWith !== input.feed
              ? `the day is observed with ${row.observedWith}; switching to ${input.feed} would mix sources`
              : null;
        const status: DayRule['status'] = reason === null ? 'ok' : 'paused';
        const observedWith = reason === null ? input.feed : row.observedWith;
        if (status !== row.status || reason !== row.reason || observedWith !== row.observedWith)
          s.update.run(status, reason, observedWith, input.nowMs, input.city, input.date);
        return { ...row, status, reason, observedWith, newlyPaused: status === 'paused' && row.status !== 'paused' };
      })(),
    read: (city: string, date: string) => (s.get.get(city, date) as DayRule | undefined) ?? null,
    latest: () => new Map((s.latest.all() as DayRule[]).map((r) => [r.city, r])),
    /** Paused city-days from `sinceDate` on, newest first. */
    paused: (sinceDate: string, limit = 200) => s.paused.all(sinceDate, limit) as DayRule[],
  };
}

/** `doctor`: city-days paused since yesterday (UTC). A warning: the service runs, those days get no signals. */
export function resolutionCheck(db: Db, nowMs: number): { status: 'ok' | 'warn'; detail: string } {
  const since = addDays(new Date(nowMs).toISOString().slice(0, 10), -1);
  const paused = createRuleStore(db).paused(since, 50);
  if (paused.length === 0) return { status: 'ok', detail: `no city paused since ${since}` };
  const list = paused.map((p) => `${p.city} ${p.targetDate}: ${p.reason ?? 'paused'}`).join('; ');
  return { status: 'warn', detail: `${paused.length} city-day(s) paused (no signals): ${list}` };
}

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
