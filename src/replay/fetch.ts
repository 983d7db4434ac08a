import type { CityRecord } from '../cities/catalog.ts';
import { localDayBounds } from '../lib/local-day.ts';
import type { Observation } from '../buckets/daily-high.ts';
import type { Clock } from '../lib/clock.ts';
import { createMetarWeather } from '../sources/weather/metar.ts';
import { createWuWeather } from '../sources/weather/wu.ts';
import { createHkoWeather } from '../sources/weather/hko.ts';
import type { WeatherSource } from '../sources/weather/types.ts';
import { ReplayInputError } from './errors.ts';
import { eventSlugs } from '../cities/market-slug.ts';
import { fetchGammaEventJson } from '../sources/market/gamma.ts';
import { marketFromEventJson, type ReplayMarket } from './market.ts';

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

/** Both slug forms (with the year first), then again with `closed=true`: Gamma has not always returned closed events. */
export async function fetchReplayMarket(up: ReplayUpstreams, city: CityRecord, date: string): Promise<ReplayMarket> {
  const gamma = { baseUrl: up.gammaUrl, timeoutMs: up.timeoutMs ?? 8_000 };
  const { withYear, withoutYear } = eventSlugs(city.marketToken, date, city.kind);
  for (const filters of ['', 'closed=true']) {
    for (const slug of [withYear, withoutYear]) {
      const raw = await fetchGammaEventJson(gamma, slug, filters);
      if (raw !== null) return marketFromEventJson(raw, 'gamma');
    }
  }
  throw new ReplayInputError(
    `Gamma has no daily-high event for ${city.slug} on ${date}; pass --market <file> or --buckets "<labels>"`,
  );
}
