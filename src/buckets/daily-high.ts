import type { MarketKind, TempUnit } from '../lib/temperature.ts';
import { localDayBounds } from '../lib/local-day.ts';
import { convertTemp } from './rounding.ts';
import { DEFAULT_KIND, KIND_RULES, roundForKind, type ReportType, type RuleKind } from './rule-kinds.ts';

/**
 * One observed temperature, as every weather source and replay file gives it, so the daily-high
 * rule lives in one place. `report`: routine or SPECI, where a METAR source knows. `raw`,
 * `precision` (the step of `temp` as given) and `availableAtMs` (the source's receipt time) are
 * provenance, carried onto the signal and never read by the rules.
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

/** The station's local day, the rule kind whose reports count, and the direction (default 'high'). */
type LocalDay = { timezone: string; date: string; kind?: RuleKind; extreme?: MarketKind };
type ReadingDay = LocalDay & { unit: TempUnit };

/** The reports the rule kind counts inside the local day (half-open: local midnight starts a day). */
function counted(observations: readonly Observation[], day: LocalDay): Observation[] {
  const { startMs, endMs } = localDayBounds(day.timezone, day.date);
  const counts = KIND_RULES[day.kind ?? DEFAULT_KIND].counts;
  return observations.filter((o) => Number.isFinite(o.temp) && o.atMs >= startMs && o.atMs < endMs && counts(o.report));
}

/**
 * The warmest (`high`) or coldest (`low`) counted observation; ties keep the earliest. Providers'
 * own rolling `max_temp`/`min_temp` fields are never used: they span the day boundary.
 */
export function dailyExtreme(observations: readonly Observation[], day: LocalDay): Observation | null {
  const sign = (day.extreme ?? 'high') === 'high' ? 1 : -1;
  let best: Observation | null = null;
  let bestC = Number.NEGATIVE_INFINITY;
  for (const o of counted(observations, day)) {
    const c = sign * convertTemp(o.temp, o.unit, 'C');
    if (c > bestC || (c === bestC && best !== null && o.atMs < best.atMs)) {
      best = o;
      bestC = c;
    }
  }
  return best;
}

/** The day's high (or low) as the market resolves it, whole degrees of the city's unit; null before any observation. */
export function dailyHighReading(observations: readonly Observation[], day: ReadingDay): number | null {
  const best = dailyExtreme(observations, day);
  return best === null ? null : roundForKind(day.kind ?? DEFAULT_KIND, best, day.unit);
}

/** The day's reading and the first report in the day that showed it (later equal reports do not move it). */
export function dailyHighReport(observations: readonly Observation[], day: ReadingDay) {
  const reading = dailyHighReading(observations, day);
  if (reading === null) return null;
  // dailyHighReading found a report with this reading, so the list is not empty; ties keep the earlier in the list.
  const first = counted(observations, day)
    .filter((o) => roundForKind(day.kind ?? DEFAULT_KIND, o, day.unit) === reading)
    .reduce((a, b) => (b.atMs < a.atMs ? b : a));
  return { reading, reportedAtMs: first.atMs, report: first };
}
