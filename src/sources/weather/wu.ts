import { z } from 'zod';
import { wuLocationId } from '../../cities/catalog.ts';
import { UpstreamError } from '../../lib/errors.ts';
import { httpJson } from '../../lib/http-client.ts';
import type { Observation } from '../../buckets/daily-high.ts';
import { mapLimit, createRateLimiter } from '../rate-limit.ts';
import type { WeatherSource } from './types.ts';
import { asError, parseUpstream } from '../upstream.ts';

/**
 * weather.com's rows of WU's "Daily Observations" table, asked in the city's own unit for the
 * station-local day. `max_temp` is not read: a rolling 6/24-hour field, often null. The API key
 * travels in the query string and is never logged.
 */
const WuResponse = z.object({
  observations: z.array(
    z.object({
      valid_time_gmt: z.number().int().positive(),
      temp: z.number().finite().nullable().optional(),
    }),
  ),
});

const CONCURRENCY = 6;

type WuOptions = {
  baseUrl: string;
  apiKey: string;
  timeoutMs?: number;
  /** Least time between two asks (WU_POLL_INTERVAL_MS): every ask is one call per station. */
  minIntervalMs?: number;
};

export function parseWu(raw: unknown, unit: 'C' | 'F'): Observation[] {
  const { observations } = parseUpstream(WuResponse, raw, { upstream: 'wu', what: 'observations' });
  const out: Observation[] = [];
  // weather.com answers whole degrees of the unit asked for; there is no raw report and no receipt time.
  for (const o of observations)
    if (typeof o.temp === 'number') out.push({ atMs: o.valid_time_gmt * 1000, temp: o.temp, unit, precision: 1 });
  return out;
}

/** The location id keeps its literal colons (`KLGA:9:US`), as every published capture of the API shows. */
function locationPath(loc: string): string {
  return loc.split(':').map(encodeURIComponent).join(':');
}

export function createWuWeather(opts: WuOptions): WeatherSource {
  const timeoutMs = opts.timeoutMs ?? 8_000;
  // weather.com publishes no limit for this key; a few calls a second is what the site itself makes.
  const limiter = createRateLimiter({ limit: 20, windowMs: 1_000 });
  return {
    name: 'wu',
    channel: 'wu',
    ...(opts.minIntervalMs ? { minIntervalMs: opts.minIntervalMs } : {}),
    observe: async (requests) => {
      const out = new Map<string, Observation[] | Error>();
      // A city's high and low streams read one station-day: one billed call serves both.
      const calls = new Map<string, { city: (typeof requests)[number]['city']; date: string; slugs: string[] }>();
      for (const { city, date } of requests) {
        const loc = wuLocationId(city);
        if (!loc) {
          out.set(city.slug, new UpstreamError('wu', 'city has no weather.com station'));
          continue;
        }
        const key = `${loc}|${date}|${city.unit}`;
        const call = calls.get(key);
        if (call) call.slugs.push(city.slug);
        else calls.set(key, { city, date, slugs: [city.slug] });
      }
      await mapLimit([...calls.values()], CONCURRENCY, async ({ city, date, slugs }) => {
        const loc = wuLocationId(city)!;
        const day = date.replaceAll('-', '');
        const url =
          `${opts.baseUrl}/v1/location/${locationPath(loc)}/observations/historical.json?apiKey=${encodeURIComponent(opts.apiKey)}` +
          `&units=${city.unit === 'F' ? 'e' : 'm'}&startDate=${day}&endDate=${day}`;
        let result: Observation[] | Error;
        try {
          await limiter.acquire();
          result = parseWu(await httpJson({ upstream: 'wu', url, timeoutMs }), city.unit);
        } catch (err) {
          result = asError(err);
        }
        for (const slug of slugs) out.set(slug, result);
      });
      return out;
    },
  };
}
