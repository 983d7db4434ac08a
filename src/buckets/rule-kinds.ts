import type { TempUnit } from '../lib/temperature.ts';
import { convertTemp, resolveReading } from './rounding.ts';

/**
 * Which reports enter a day's maximum and how it is rounded, per rule kind (evidence:
 * docs/resolution-rules.md "Rule kinds"). A report of unknown type counts under every kind.
 */
export type RuleKind = keyof typeof KIND_RULES;

/** `routine`: a scheduled METAR; `special`: a SPECI; absent: the source does not say. */
export type ReportType = 'routine' | 'special';

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
 * A raw reading as the rule resolves it, whole degrees of `to`. `floor-tenth`: a bucket `k°C` holds
 * [k, k+1), so 28.96 is first cleaned to the source's 0.1 (29.0), then floored: float noise never
 * moves a reading across a degree.
 */
export function roundForKind(kind: RuleKind, raw: { temp: number; unit: TempUnit }, to: TempUnit): number {
  if (KIND_RULES[kind].rounding === 'half-up') return resolveReading(raw.temp, raw.unit, to);
  const tenths = Math.round(convertTemp(raw.temp, raw.unit, to) * 10);
  return Math.floor(tenths / 10);
}
