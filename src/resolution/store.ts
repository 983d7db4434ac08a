import type { Db } from '../db/open.ts';
import type { ResolutionRule } from '../sources/market/resolution-rule.ts';
import { describeRule, type Verdict } from './judge.ts';

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

function sameRule(r: DayRule, rule: ResolutionRule): boolean {
  return (
    r.source === rule.source &&
    // A day recorded before 0010 has no kind; the first read that states one does not pause it.
    (r.kind === null || r.kind === rule.kind) &&
    r.station === rule.station &&
    r.unit === rule.unit &&
    r.precision === rule.precision &&
    r.fallback === rule.fallback
  );
}

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
          const next: DayRule = {
            city: input.city,
            targetDate: input.date,
            source: rule.source,
            kind: rule.kind,
            station: rule.station,
            unit: rule.unit,
            precision: rule.precision,
            fallback: rule.fallback,
            url: rule.url,
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
