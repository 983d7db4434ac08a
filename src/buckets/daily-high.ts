import type { MarketKind, TempUnit } from '../lib/temperature.ts';
import { localDayBounds } from '../lib/local-day.ts';
import { convertTemp, resolveReading } from './rounding.ts';

/** Which reports count and how they round, per rule kind (docs/resolution-rules.md "Rule kinds"). */
export type RuleKind = keyof typeof KIND_RULES;

/** `routine`: a scheduled METAR; `special`: a SPECI; absent: the source does not say (counted by every kind). */
type ReportType = 'routine' | 'special';

type KindRule = {
  counts(report: ReportType | undefined): boolean;
  rounding: 'half-up' | 'floor-tenth';
  describe: string;
};

const everyReport = () => true;

export const KIND_RULES = {
  'noaa-hourly': {
    counts: (report) => report !== 'special',
    rounding: 'half-up',
    describe: 'routine hourly METARs only (SPECIs are not in the hourly view), whole degrees half-up',
  },
  'noaa-all': { counts: everyReport, rounding: 'half-up', describe: 'every METAR and SPECI, whole degrees half-up' },
  'wu-table': {
    counts: everyReport,
    rounding: 'half-up',
    describe: 'every row of the daily observations table (METAR and SPECI), whole degrees half-up',
  },
  hko: {
    counts: everyReport,
    rounding: 'floor-tenth',
    describe: "the Observatory's 0.1 °C maximum, rounded down to a whole degree",
  },
  cwa: {
    counts: everyReport,
    rounding: 'floor-tenth',
    describe: "the station's 0.1 °C hourly maximum, rounded down to a whole degree",
  },
} as const satisfies Record<string, KindRule>;

/** What the day's rules read when a caller has no parsed rule: every report, half-up. */
export const DEFAULT_KIND: RuleKind = 'wu-table';

/**
 * A raw reading as the rule resolves it, whole degrees of `to`. `floor-tenth`: 28.96 is first cleaned
 * to the source's 0.1 (29.0), then floored, so float noise never moves a reading across a degree.
 */
function roundForKind(kind: RuleKind, raw: { temp: number; unit: TempUnit }, to: TempUnit): number {
  if (KIND_RULES[kind].rounding === 'half-up') return resolveReading(raw.temp, raw.unit, to);
  const tenths = Math.round(convertTemp(raw.temp, raw.unit, to) * 10);
  return Math.floor(tenths / 10);
}

/**
 * One observed temperature, as every source and replay file gives it. `report`: where a METAR source
 * knows; `raw`, `precision` (the step of `temp`) and `availableAtMs` are provenance, never read here.
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

/** The warmest or coldest counted report, the earliest on a tie (providers' rolling max_temp spans days). */
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
