import type { MarketKind, TempUnit } from '../lib/temperature.ts';
import { localDayBounds } from '../lib/local-day.ts';
import { convertTemp } from './rounding.ts';
import { DEFAULT_KIND, KIND_RULES, roundForKind, type ReportType, type RuleKind } from './rule-kinds.ts';

/**
 * One observed temperature. Weather sources return plain lists of these (and a replay can build
 * them from files), so the daily-high rule lives in one place. `report` says whether a METAR
 * source's row was a routine report or a SPECI; sources that do not know leave it out. The rest is
 * provenance, carried onto the signal and never read by the rules: `raw` the report text where
 * the source has one (the METAR), `precision` the step of `temp` as the source gave it (0.1 for
 * tenths such as the METAR T group, 1 for whole degrees), `availableAtMs` when the source itself
 * received the report (aviationweather.gov `receiptTime`).
 */
export type Observation = {
  atMs: number;
  temp: number;
  unit: TempUnit;
  report?: ReportType;
  raw?: string;
  precision?: number;
  availableAtMs?: number;
};

/**
 * Which day the rules read: the station's local calendar day `date` in `timezone`, the rule kind
 * whose reports count (default: every report, half-up) and the direction (`extreme`, default
 * 'high'). A resolved reading also names the city's `unit`.
 */
type LocalDay = { timezone: string; date: string; kind?: RuleKind; extreme?: MarketKind };
export type ReadingDay = LocalDay & { unit: TempUnit };

/**
 * The warmest (`high`) or coldest (`low`) observation inside the station's local calendar day
 * `date` (half-open: local midnight belongs to the day it starts) among the reports the rule kind
 * counts (src/buckets/rule-kinds.ts). A low market reads the same reports with the same rounding
 * as a high one; only the direction differs. Providers' own rolling `max_temp`/`min_temp` fields
 * are never used: they span 6 or 24 hours across the day boundary. Ties keep the earliest
 * observation.
 */
export function dailyExtreme(observations: readonly Observation[], day: LocalDay): Observation | null {
  const { startMs, endMs } = localDayBounds(day.timezone, day.date);
  const counts = KIND_RULES[day.kind ?? DEFAULT_KIND].counts;
  const sign = (day.extreme ?? 'high') === 'high' ? 1 : -1;
  let best: Observation | null = null;
  let bestC = Number.NEGATIVE_INFINITY;
  for (const o of observations) {
    if (!Number.isFinite(o.temp) || o.atMs < startMs || o.atMs >= endMs || !counts(o.report)) continue;
    const c = sign * convertTemp(o.temp, o.unit, 'C');
    if (c > bestC || (c === bestC && best !== null && o.atMs < best.atMs)) {
      best = o;
      bestC = c;
    }
  }
  return best;
}

/**
 * The day's high (or, with `extreme` 'low', its low) as the market resolves it: whole degrees of
 * the city's unit, or null before any observation.
 */
export function dailyHighReading(observations: readonly Observation[], day: ReadingDay): number | null {
  const best = dailyExtreme(observations, day);
  return best === null ? null : roundForKind(day.kind ?? DEFAULT_KIND, best, day.unit);
}

/**
 * The day's high (or low) as the market resolves it and the station's own time of the first
 * report in the day that showed it (the report that took the reading there; later equal reports
 * do not move it). Null before any observation.
 */
export function dailyHighReport(
  observations: readonly Observation[],
  day: ReadingDay,
): { reading: number; reportedAtMs: number; report: Observation } | null {
  const reading = dailyHighReading(observations, day);
  if (reading === null) return null;
  const { startMs, endMs } = localDayBounds(day.timezone, day.date);
  const kind = day.kind ?? DEFAULT_KIND;
  const counts = KIND_RULES[kind].counts;
  let first: Observation | null = null;
  for (const o of observations) {
    if (!Number.isFinite(o.temp) || o.atMs < startMs || o.atMs >= endMs || !counts(o.report)) continue;
    if (first !== null && o.atMs >= first.atMs) continue;
    if (roundForKind(kind, o, day.unit) === reading) first = o;
  }
  // dailyHighReading found a report with this reading, so `first` is set.
  return { reading, reportedAtMs: first!.atMs, report: first! };
}
