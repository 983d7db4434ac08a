import type { Clock } from '../../lib/clock.ts';
import type { Logger } from '../../lib/logger.ts';
import { eventSlugs } from '../../cities/market-slug.ts';
import { createRateLimiter, type RateLimiter } from '../rate-limit.ts';
import { fetchGammaEventJson, parseGammaEvent } from './gamma.ts';
import { fetchOdds } from './clob.ts';
import type { MarketEvent, MarketSource } from './types.ts';

/** Events kept (a few KiB each); two per city for catalogs up to 8,000 cities. */
const MAX_CACHED_EVENTS = 16_384;

export function createPolymarketSource(opts: {
  gammaUrl: string;
  clobUrl: string;
  clock: Clock;
  logger: Logger;
  gammaTimeoutMs?: number;
  clobTimeoutMs?: number;
  foundTtlMs?: number;
  missingTtlMs?: number;
  gammaLimiter?: RateLimiter;
  clobLimiter?: RateLimiter;
}): MarketSource {
  const gamma = { baseUrl: opts.gammaUrl, timeoutMs: opts.gammaTimeoutMs ?? 5_000 };
  const clob = { baseUrl: opts.clobUrl, timeoutMs: opts.clobTimeoutMs ?? 3_000 };
  // A found day's ladder and rule are fixed when it is listed; a missing one is asked again after
  // `missingTtlMs` (one Gamma call per few minutes, not per tick).
  const foundTtl = opts.foundTtlMs ?? Number.POSITIVE_INFINITY;
  const missingTtl = opts.missingTtlMs ?? 5 * 60_000;
  // Reference rate_limits_per_10s: Gamma /events 500, CLOB /books 500; we stay at 80 %.
  const gammaLimit = opts.gammaLimiter ?? createRateLimiter({ limit: 400, windowMs: 10_000 });
  const clobLimit = opts.clobLimiter ?? createRateLimiter({ limit: 400, windowMs: 10_000 });
  const cache = new Map<string, { event: MarketEvent | null; atMs: number }>();

  const lookup = async (slug: string) => {
    await gammaLimit.acquire();
    const raw = await fetchGammaEventJson(gamma, slug);
    return raw === null ? null : parseGammaEvent(raw);
  };

  return {
    name: 'polymarket',
    event: async (city, date) => {
      const key = `${city.slug}|${date}`;
      const now = opts.clock.now();
      const hit = cache.get(key);
      if (hit && now - hit.atMs < (hit.event ? foundTtl : missingTtl)) return hit.event;
      const { withYear, withoutYear } = eventSlugs(city.marketToken, date, city.kind);
      const event = (await lookup(withYear)) ?? (await lookup(withoutYear));
      if (!event && !hit)
        opts.logger.info('no market for city-day', { city: city.slug, date, slugs: [withYear, withoutYear] });
      cache.delete(key);
      cache.set(key, { event, atMs: now });
      // Room for two days of every city even in large catalogs: a cap below the number of cities
      // made every tick refetch every event (measured: 3,700 cities, 8x the per-city tick cost).
      if (cache.size > MAX_CACHED_EVENTS) cache.delete(cache.keys().next().value!);
      return event;
    },
    odds: async (_city, _date, o) => {
      await clobLimit.acquire();
      const byLabel = await fetchOdds(
        { ...clob, timeoutMs: Math.max(1, Math.min(clob.timeoutMs, o.timeoutMs ?? Infinity)) },
        o.event.buckets,
      );
      return { asOfMs: opts.clock.now(), byLabel };
    },
  };
}
