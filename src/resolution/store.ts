import type { Db } from '../db/open.ts';
import { addDays } from '../lib/local-day.ts';
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
