import type { TempUnit } from '../cities/catalog.ts';
import { localDayBounds } from '../cities/local-day.ts';
import { convertTemp, resolveReading } from './rounding.ts';

/**
 * One observed temperature. Weather sources return plain lists of these (and a replay can build
 * them from files), so the daily-high rule lives in one place.
 */
export type Observation = { atMs: number; temp: number; unit: TempUnit };

/**
 * The warmest observation inside the station's local calendar day `date` (half-open: local
 * midnight belongs to the day it starts). Providers' own rolling `max_temp` fields are never used:
 * they span 6 or 24 hours across the day boundary. Ties keep the earliest observation.
 */
export function dailyHigh(observations: readonly Observation[], timezone: string, date: string): Observation | null {
  const { startMs, endMs } = localDayBounds(timezone, date);
  let best: Observation | null = null;
  let bestC = Number.NEGATIVE_INFINITY;
  for (const o of observations) {
    if (!Number.isFinite(o.temp) || o.atMs < startMs || o.atMs >= endMs) continue;
    const c = convertTemp(o.temp, o.unit, 'C');
    if (c > bestC || (c === bestC && best !== null && o.atMs < best.atMs)) {
      best = o;
      bestC = c;
    }
  }
  return best;
}

/** The day's high as the market resolves it: whole degrees of the city's unit, or null before any observation. */
export function dailyHighReading(
  observations: readonly Observation[],
  timezone: string,
  date: string,
  unit: TempUnit,
): number | null {
  const high = dailyHigh(observations, timezone, date);
  return high === null ? null : resolveReading(high.temp, high.unit, unit);
}

/**
 * The day's high as the market resolves it and the station's own time of the first report in the
 * day that showed it (the report that took the high to this reading; later equal reports do not
 * move it). Null before any observation.
 */
export function dailyHighReport(
  observations: readonly Observation[],
  timezone: string,
  date: string,
  unit: TempUnit,
): { reading: number; reportedAtMs: number } | null {
  const reading = dailyHighReading(observations, timezone, date, unit);
  if (reading === null) return null;
  const { startMs, endMs } = localDayBounds(timezone, date);
  let first = Number.POSITIVE_INFINITY;
  for (const o of observations) {
    if (!Number.isFinite(o.temp) || o.atMs < startMs || o.atMs >= endMs || o.atMs >= first) continue;
    if (resolveReading(o.temp, o.unit, unit) === reading) first = o.atMs;
  }
  return { reading, reportedAtMs: first };
}
