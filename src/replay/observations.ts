import type { CityRecord } from '../cities/catalog.ts';
import type { TempUnit } from '../lib/temperature.ts';
import type { Observation } from '../buckets/daily-high.ts';
import type { Clock } from '../lib/clock.ts';
import { UpstreamError } from '../lib/errors.ts';
import { localDayBounds } from '../lib/local-day.ts';
import { createWuWeather, parseWu } from '../sources/weather/wu.ts';
import { createMetarWeather, parseMetar } from '../sources/weather/metar.ts';
import { createHkoWeather } from '../sources/weather/hko.ts';
import type { WeatherSource } from '../sources/weather/types.ts';
import { ReplayInputError } from './errors.ts';

/** Read with the live adapters' parsers, so a file means what the same bytes from the API would. */
export const OBSERVATION_FORMATS = ['wu', 'metar', 'csv'] as const;

/** Reads `text` as `format`, or guesses: a JSON array is METAR, a JSON object is weather.com, else CSV. */
export function parseObservationFile(text: string, city: CityRecord, format?: (typeof OBSERVATION_FORMATS)[number]) {
  const trimmed = text.trim();
  if (trimmed === '') throw new ReplayInputError('observation file is empty');
  const json = format === 'csv' ? undefined : tryJson(trimmed);
  const chosen = format ?? (Array.isArray(json) ? 'metar' : json !== undefined ? 'wu' : 'csv');
  if (chosen !== 'csv' && json === undefined)
    throw new ReplayInputError(`observation file is not JSON, so it cannot be ${chosen}`);
  try {
    if (chosen === 'wu') return { format: chosen, observations: wuFile(json) };
    if (chosen === 'metar') return { format: chosen, observations: metarFile(json, city) };
    return { format: chosen, observations: parseCsv(trimmed) };
  } catch (err) {
    // The adapters report garbage as an upstream fault; from a file it is the user's input.
    if (err instanceof UpstreamError) throw new ReplayInputError(`${chosen} observations: ${err.message}`);
    throw err;
  }
}

function tryJson(text: string): unknown {
  if (!text.startsWith('{') && !text.startsWith('[')) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function wuFile(json: unknown): Observation[] {
  const units = (json as { metadata?: { units?: unknown } } | null)?.metadata?.units;
  if (units !== 'e' && units !== 'm') {
    throw new ReplayInputError(
      'weather.com observations need metadata.units "e" (°F) or "m" (°C): the temperatures are whole degrees of that unit',
    );
  }
  return parseWu(json, units === 'e' ? 'F' : 'C');
}

function metarFile(json: unknown, city: CityRecord): Observation[] {
  const byStation = parseMetar(json);
  if (byStation.size === 0) return [];
  const station = city.station?.toUpperCase();
  const rows = station ? byStation.get(station) : undefined;
  if (!rows)
    throw new ReplayInputError(
      `METAR file has no reports for ${city.slug}'s station ${station ?? '(none)'}; it has ${[...byStation.keys()].join(', ')}`,
    );
  return rows;
}

const ISO_WITH_ZONE = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/i;

function parseCsv(text: string): Observation[] {
  const out: Observation[] = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === '' || line.startsWith('#')) continue;
    const cells = line.split(',').map((c) => c.trim());
    if (out.length === 0 && /^time$/i.test(cells[0] ?? '')) continue;
    const where = `CSV line ${i + 1}`;
    if (cells.length !== 3)
      throw new ReplayInputError(`${where}: expected time,temp,unit, got ${JSON.stringify(line.slice(0, 60))}`);
    const [time, temp, unit] = cells as [string, string, string];
    out.push({ atMs: parseTime(time, where), temp: parseTemp(temp, where), unit: parseUnit(unit, where) });
  }
  return out;
}

function parseTime(s: string, where: string): number {
  if (/^\d{9,11}$/.test(s)) return Number(s) * 1000;
  // A time without a zone would be read in this machine's zone, and the local day is the whole point.
  if (!ISO_WITH_ZONE.test(s))
    throw new ReplayInputError(
      `${where}: time ${JSON.stringify(s)} must be ISO 8601 with a zone (Z or +hh:mm) or epoch seconds`,
    );
  const ms = Date.parse(s.replace(' ', 'T'));
  if (!Number.isFinite(ms)) throw new ReplayInputError(`${where}: time ${JSON.stringify(s)} is not a real instant`);
  return ms;
}

function parseTemp(s: string, where: string): number {
  const n = /^[-+]?\d+(\.\d+)?$/.test(s) ? Number(s) : Number.NaN;
  if (!Number.isFinite(n) || Math.abs(n) > 200)
    throw new ReplayInputError(`${where}: temperature ${JSON.stringify(s)} is not a number of degrees`);
  return n;
}

function parseUnit(s: string, where: string): TempUnit {
  const u = s.replace(/^\u00B0/, '').toUpperCase();
  if (u !== 'C' && u !== 'F') throw new ReplayInputError(`${where}: unit ${JSON.stringify(s)} must be C or F`);
  return u;
}

/** Replay without files, through the live adapters: weather.com serves any past day, aviationweather.gov recent hours. */
export type ReplayUpstreams = {
  weatherSource: 'wu' | 'metar';
  weatherUrl: string;
  wuApiKey?: string;
  metarUrl: string;
  hkoUrl?: string;
  gammaUrl: string;
  timeoutMs?: number;
};

/** The METAR adapter asks for at most 48 hours back, counted from now, plus one hour of margin. */
const METAR_REACH_MS = 47 * 3_600_000;

/** `prefer: 'metar'` (a NOAA-rule day) reads METAR when the day is within its reach. */
export async function fetchObservations(
  up: ReplayUpstreams,
  { city, date, clock, prefer }: { city: CityRecord; date: string; clock: Clock; prefer?: 'metar' | undefined },
): Promise<{ source: string; observations: Observation[] }> {
  const { startMs } = localDayBounds(city.timezone, date);
  const now = clock.now();
  if (startMs > now) throw new ReplayInputError(`${date} has not begun yet in ${city.timezone}; nothing to fetch`);
  let weather: WeatherSource;
  if (city.resolutionSource === 'hko') {
    // Past days: the Observatory's since-midnight file only holds today's running maximum.
    weather = createHkoWeather({ baseUrl: up.hkoUrl ?? 'https://data.weather.gov.hk', timeoutMs: up.timeoutMs });
  } else if (up.weatherSource === 'wu' && !(prefer === 'metar' && now - startMs <= METAR_REACH_MS)) {
    if (!up.wuApiKey)
      throw new ReplayInputError(
        'WEATHER_SOURCE=wu needs WU_API_KEY to fetch weather.com history (or pass --observations <file>)',
      );
    weather = createWuWeather({ baseUrl: up.weatherUrl, apiKey: up.wuApiKey, timeoutMs: up.timeoutMs });
  } else {
    if (now - startMs > METAR_REACH_MS) {
      const hours = Math.ceil((now - startMs) / 3_600_000);
      throw new ReplayInputError(
        `aviationweather.gov METARs reach back 48 hours, and ${city.slug}'s ${date} began ${hours} hours ago; ` +
          'set WEATHER_SOURCE=wu (with WU_API_KEY) for older days, or pass --observations <file>',
      );
    }
    weather = createMetarWeather({ baseUrl: up.metarUrl, clock, timeoutMs: up.timeoutMs });
  }
  const got = (await weather.observe([{ city, date }])).get(city.slug);
  if (got instanceof Error) throw got;
  // Nothing from the Observatory is an empty day (the command says why); from the others, a fault.
  if (got === undefined && weather.name !== 'hko') throw new Error(`${weather.name} returned nothing for ${city.slug}`);
  return { source: weather.name, observations: got ?? [] };
}
