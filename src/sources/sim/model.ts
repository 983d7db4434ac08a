import { createHash } from 'node:crypto';
import type { CityRecord } from '../../cities/catalog.ts';
import { localDayBounds, zoneOffsetMs } from '../../lib/local-day.ts';
import type { Observation } from '../../buckets/daily-high.ts';
import { convertTemp } from '../../buckets/rounding.ts';
import type { Db } from '../../db/open.ts';
import type { Clock } from '../../lib/clock.ts';
import type { WeatherSource } from '../weather/types.ts';

// Every value is a hash of (SIM_SEED, city, day, ...): the same world on every machine and restart.
// °C to tenths like a METAR, so °F cities go through the real conversion path.

/** Plausible, not authoritative; a southern-hemisphere city (`S`) has its seasons shifted half a year. */
type Climate = readonly [meanHighC: number, seasonalC: number, diurnalC: number, hemisphere?: 'S'];

const CLIMATE: Readonly<Record<string, Climate>> = {
  nyc: [17, 12, 8],
  chicago: [15, 15, 9],
  miami: [29, 3.5, 7],
  dallas: [25, 11, 11],
  seattle: [16, 8, 8],
  atlanta: [22, 9, 10],
  'los-angeles': [22, 3.5, 7],
  'san-francisco': [19, 3, 7],
  houston: [27, 8, 10],
  austin: [27, 9, 12],
  denver: [18, 12, 14],
  toronto: [13, 14, 9],
  'mexico-city': [24, 3, 13],
  'buenos-aires': [23, 7, 9, 'S'],
  'sao-paulo': [26, 3.5, 9, 'S'],
  london: [15, 7, 7],
  paris: [16, 8, 8],
  munich: [14, 10, 9],
  milan: [18, 11, 9],
  madrid: [20, 10, 12],
  warsaw: [13, 11, 8],
  amsterdam: [14, 7, 7],
  helsinki: [10, 12, 7],
  ankara: [18, 13, 13],
  'tel-aviv': [25, 6, 8],
  jeddah: [35, 4, 9],
  'cape-town': [22, 4.5, 9, 'S'],
  lucknow: [32, 7, 11],
  karachi: [32, 4, 9],
  seoul: [17, 13, 8],
  tokyo: [20, 10, 7],
  shanghai: [21, 11, 7],
  beijing: [19, 15, 11],
  singapore: [31, 1, 7],
  'kuala-lumpur': [32, 1, 8],
  manila: [31, 1.5, 7],
  wellington: [16, 3.5, 6, 'S'],
};

/** Fallback for a city without a row (inactive cities, test catalogs). */
const DEFAULT_CLIMATE: Climate = [20, 8, 9];

const HOUR = 3_600_000;
const DAY_MS = 86_400_000;
const OBS_EVERY_MS = 20 * 60_000;
const PEAK_HOUR = 15;
const TROUGH_HOUR = 6;

function hash01(...parts: (string | number)[]): number {
  return Number.parseInt(hashHex(...parts).slice(0, 12), 16) / 2 ** 48;
}

export function hashHex(...parts: (string | number)[]): string {
  return createHash('sha256').update(parts.join('|')).digest('hex');
}

/** Roughly normal noise in [-1, 1] with most mass near 0 (mean of three uniforms). */
function wobble(...parts: (string | number)[]): number {
  return (hash01(...parts, 'a') + hash01(...parts, 'b') + hash01(...parts, 'c')) / 1.5 - 1;
}

/** A low stream (`nyc-low`) hashes its high city's slug, so both see one world. */
const worldKey = (city: Pick<CityRecord, 'slug' | 'baseSlug'>): string => city.baseSlug ?? city.slug;

/**
 * The high market's forecast and the high the day reaches at the peak hour; the low market's
 * forecast and the low at dawn (06:00 local), which the evening never cools below. All °C.
 */
export function simDay(seed: string, city: CityRecord, date: string) {
  const key = worldKey(city);
  const [meanHighC, seasonalC, diurnalC, hemisphere] = CLIMATE[key] ?? DEFAULT_CLIMATE;
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  const dayOfYear = (Date.UTC(y, m - 1, d) - Date.UTC(y, 0, 1)) / DAY_MS;
  const peakDoy = hemisphere === 'S' ? 15 : 196;
  const seasonal = meanHighC + seasonalC * Math.cos((2 * Math.PI * (dayOfYear - peakDoy)) / 365.25);
  const forecastC = seasonal + 3 * wobble(seed, key, date, 'anomaly');
  const highC = forecastC + 1.5 * wobble(seed, key, date, 'error');
  const lowC = highC - diurnalC * (0.8 + 0.4 * hash01(seed, key, date, 'range'));
  return { forecastC, highC, lowForecastC: lowC - 1.5 * wobble(seed, key, date, 'low-error'), lowC };
}

/** Smooth day curve: night cooling to the trough at 06:00, cosine rise to the peak at 15:00, evening fall. */
export function curveC(day: ReturnType<typeof simDay>, localHour: number): number {
  const range = day.highC - day.lowC;
  const night = day.lowC + 0.3 * range;
  if (localHour < TROUGH_HOUR) return night - (night - day.lowC) * (localHour / TROUGH_HOUR);
  if (localHour <= PEAK_HOUR)
    return day.lowC + (range * (1 - Math.cos((Math.PI * (localHour - TROUGH_HOUR)) / (PEAK_HOUR - TROUGH_HOUR)))) / 2;
  return day.highC - (day.highC - night) * ((localHour - PEAK_HOUR) / (24 - PEAK_HOUR));
}

/** Share of the day's warming still to come at the local hour: 1 before dawn, 0 after the peak. */
function warmingLeft(localHour: number): number {
  if (localHour <= TROUGH_HOUR) return 1;
  if (localHour >= PEAK_HOUR) return 0;
  return (1 + Math.cos((Math.PI * (localHour - TROUGH_HOUR)) / (PEAK_HOUR - TROUGH_HOUR))) / 2;
}

function localHour(timezone: string, atMs: number, startMs: number): number {
  // Wall-clock hour, so DST days (23 or 25 hours) still peak at 15:00 local.
  const wall = atMs + zoneOffsetMs(timezone, atMs);
  const wallStart = startMs + zoneOffsetMs(timezone, startMs);
  return Math.min(23.999, Math.max(0, (wall - wallStart) / HOUR));
}

/** Observations on local day `date` up to `untilMs`: every 20 minutes at a per-station offset, with noise. */
export function simObservations(
  seed: string,
  { city, date, untilMs }: { city: CityRecord; date: string; untilMs: number },
): Observation[] {
  const { startMs, endMs } = localDayBounds(city.timezone, date);
  const day = simDay(seed, city, date);
  const key = worldKey(city);
  const offset = Math.floor((hash01(seed, key, 'minute') * OBS_EVERY_MS) / 60_000) * 60_000;
  const out: Observation[] = [];
  let t = Math.ceil((startMs - offset) / OBS_EVERY_MS) * OBS_EVERY_MS + offset;
  for (; t < endMs && t <= untilMs; t += OBS_EVERY_MS) {
    const temp = curveC(day, localHour(city.timezone, t, startMs)) + 0.4 * wobble(seed, key, t);
    out.push({ atMs: t, temp: Math.round(temp * 10) / 10, unit: 'C', precision: 0.1 });
  }
  return out;
}

/** The market's view at `atMs`: a high is at least the high so far (`floor`), a low at most the low so far (`ceiling`). */
export function simBelief(
  seed: string,
  { city, date, atMs, soFar }: { city: CityRecord; date: string; atMs: number; soFar: number | null },
) {
  const { startMs } = localDayBounds(city.timezone, date);
  const hour = localHour(city.timezone, Math.max(atMs, startMs), startMs);
  const day = simDay(seed, city, date);
  const perDegC = city.unit === 'F' ? 1.8 : 1;
  const low = city.kind === 'low';
  // A low moves down: the share of the night's cooling still to come is 1 at midnight, 0 from dawn on.
  const left = low ? (hour >= TROUGH_HOUR ? 0 : 1 - hour / TROUGH_HOUR) : warmingLeft(hour);
  const sign = low ? -1 : 1;
  const forecast = convertTemp(low ? day.lowForecastC : day.forecastC, 'C', city.unit);
  const mean = soFar === null ? forecast : soFar + sign * left * Math.max(sign * (forecast - soFar), 0.5 * perDegC);
  const sd = ((low ? 0.4 : 0.6) + 2 * left) * perDegC;
  return low ? { mean, sd, floor: null, ceiling: soFar } : { mean, sd, floor: soFar, ceiling: null };
}

export function createSimWeather(opts: { seed: string; simClock: SimClock }): WeatherSource {
  return {
    name: 'sim',
    reportedAtReal: opts.simClock.realAt,
    observe: async (requests) => {
      const now = opts.simClock.now();
      return new Map(
        requests.map(({ city, date }) => [city.slug, simObservations(opts.seed, { city, date, untilMs: now })]),
      );
    },
  };
}

/**
 * The anchor is stored so a restart continues forward instead of replaying days already signalled.
 * The warm-up exists because a high only moves 09:20-15:00 local: a city past its afternoon waited
 * 18 real minutes for a first signal. The stored anchor is where the warm-up ends (no extra column).
 */
type Anchor = { realMs: number; simMs: number; speed: number };

function simAt(a: Anchor, realMs: number): number {
  if (realMs >= a.realMs) return Math.round(a.simMs + (realMs - a.realMs) * a.speed);
  // Before the anchor: inside a warm-up, whose line started one simulated day before the anchor at
  // simulated = real. (A wall clock set back before an ordinary anchor lands here too.)
  const realStart = a.simMs - DAY_MS;
  if (realMs <= realStart) return realStart;
  return Math.round(realStart + ((realMs - realStart) * DAY_MS) / (a.realMs - realStart));
}

/** The real instant simulated time showed `simMs`, clamped to `realNow`: `reportedAt` is never after `observedAt`. */
function realAt(a: Anchor, simMs: number, realNow: number): number {
  const realStart = a.simMs - DAY_MS;
  const inWarmUp = realNow < a.realMs && realNow > realStart;
  const r = inWarmUp
    ? realStart + ((simMs - realStart) * (a.realMs - realStart)) / DAY_MS
    : a.realMs + (simMs - a.simMs) / a.speed;
  return Math.round(Math.min(realNow, r));
}

type SimClock = Clock & { realAt(simMs: number): number };

export function createSimClock(db: Db, opts: { speed: number; real: Clock; warmUpRealMs?: number }): SimClock {
  const realNow = opts.real.now();
  const warmUp = Math.max(0, opts.warmUpRealMs ?? 0);
  const anchor = db.transaction(() => {
    const row = db
      .prepare('SELECT real_anchor_ms AS realMs, sim_anchor_ms AS simMs, speed FROM sim_clock WHERE id = 1')
      .get() as Anchor | undefined;
    if (row && row.speed === opts.speed) return row;
    const next: Anchor = row
      ? { realMs: Math.max(realNow, row.realMs), simMs: simAt(row, Math.max(realNow, row.realMs)), speed: opts.speed }
      : warmUp > 0
        ? { realMs: realNow + warmUp, simMs: realNow + DAY_MS, speed: opts.speed }
        : { realMs: realNow, simMs: realNow, speed: opts.speed };
    db.prepare(`INSERT INTO sim_clock (id, real_anchor_ms, sim_anchor_ms, speed) VALUES (1, ?, ?, ?)
      ON CONFLICT (id) DO UPDATE SET real_anchor_ms = excluded.real_anchor_ms, sim_anchor_ms = excluded.sim_anchor_ms, speed = excluded.speed`).run(
      next.realMs,
      next.simMs,
      next.speed,
    );
    return next;
  })();
  return { now: () => simAt(anchor, opts.real.now()), realAt: (simMs) => realAt(anchor, simMs, opts.real.now()) };
}
