import { z } from 'zod';
import { wuLocationId } from '../../cities/catalog.ts';
import { UpstreamError } from '../../lib/errors.ts';
import { httpJson } from '../../lib/http-client.ts';
import type { Observation } from '../../buckets/daily-high.ts';
import { observeByCall, type WeatherSource } from './types.ts';
import { createRateLimiter, parseUpstream } from '../upstream.ts';

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

export function createWuWeather(opts: {
  baseUrl: string;
  apiKey: string;
  timeoutMs?: number;
  /** Least time between two asks (WU_POLL_INTERVAL_MS): every ask is one call per station. */
  minIntervalMs?: number;
}): WeatherSource {
  // weather.com publishes no limit for this key; a few calls a second is what the site itself makes.
  const limiter = createRateLimiter({ limit: 20, windowMs: 1_000 });
  return {
    name: 'wu',
    ...(opts.minIntervalMs ? { minIntervalMs: opts.minIntervalMs } : {}),
    observe: (requests) =>
      observeByCall(requests, {
        // A city's high and low streams read one station-day: one billed call serves both.
        keyOf: ({ city, date }) => {
          const loc = wuLocationId(city);
          return loc ? `${loc}|${date}|${city.unit}` : new UpstreamError('wu', 'city has no weather.com station');
        },
        concurrency: CONCURRENCY,
        call: async (_, reqs) => {
          const { city, date } = reqs[0]!;
          const day = date.replaceAll('-', '');
          const url =
            `${opts.baseUrl}/v1/location/${locationPath(wuLocationId(city)!)}/observations/historical.json?apiKey=${encodeURIComponent(opts.apiKey)}` +
            `&units=${city.unit === 'F' ? 'e' : 'm'}&startDate=${day}&endDate=${day}`;
          await limiter.acquire();
          const obs = parseWu(await httpJson({ upstream: 'wu', url, timeoutMs: opts.timeoutMs ?? 8_000 }), city.unit);
          return () => obs;
        },
      }),
  };
}
