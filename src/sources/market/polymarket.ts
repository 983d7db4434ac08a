import { z } from 'zod';
import type { Clock } from '../../lib/clock.ts';
import { UpstreamError } from '../../lib/errors.ts';
import { httpJson } from '../../lib/http-client.ts';
import type { Logger } from '../../lib/logger.ts';
import { eventSlugs } from '../../cities/market-slug.ts';
import { createRateLimiter, parseUpstream, type RateLimiter } from '../upstream.ts';
import { fetchGammaEventJson, parseGammaEvent } from './gamma.ts';
import type { BucketOdds, MarketEvent, MarketSource } from './types.ts';

/**
 * CLOB order books, all of an event's tokens in one `POST /books`. `yes`/`no`: the best ask of
 * that side's book; `midpoint`: the YES book's mid. Best levels are taken as max bid and min ask,
 * not by position, so a change of the list order cannot break them. A missing side falls back to
 * the complementary book (YES ask = 1 - NO best bid), then the last trade. A bucket with nothing
 * at all is `NO_QUOTE` (the widest market, flagged); only a ladder with no price anywhere fails.
 */
const num = z.union([z.string(), z.number()]).transform(Number);
const Level = z.object({ price: num.pipe(z.number().min(0).max(1)), size: num.pipe(z.number().nonnegative()) });
const Book = z.object({
  asset_id: z.string(),
  bids: z.array(Level).nullish(),
  asks: z.array(Level).nullish(),
  // "" when the market has not traded yet.
  last_trade_price: z
    .union([z.string(), z.number()])
    .transform((v) => (v === '' ? null : Number(v)))
    .pipe(z.number().min(0).max(1).nullable())
    .nullish(),
});
type Book = z.infer<typeof Book>;

/** An empty book: nobody sells either side below the full dollar, nobody bids above zero. */
export const NO_QUOTE: BucketOdds = Object.freeze({ yes: 1, no: 1, midpoint: 0.5, noQuote: true as const });

const round4 = (x: number) => Math.round(x * 10_000) / 10_000;

function best(book: Book | undefined): { bid: number | null; ask: number | null; last: number | null } {
  const bids = (book?.bids ?? []).filter((l) => l.size > 0).map((l) => l.price);
  const asks = (book?.asks ?? []).filter((l) => l.size > 0).map((l) => l.price);
  return {
    bid: bids.length ? Math.max(...bids) : null,
    ask: asks.length ? Math.min(...asks) : null,
    last: book?.last_trade_price ?? null,
  };
}

export function oddsFromBooks(yesBook: Book | undefined, noBook: Book | undefined): BucketOdds | null {
  const y = best(yesBook);
  const n = best(noBook);
  const yes = y.ask ?? (n.bid !== null ? 1 - n.bid : null) ?? y.last;
  const no = n.ask ?? (y.bid !== null ? 1 - y.bid : null) ?? (y.last !== null ? 1 - y.last : null);
  let midpoint: number | null = null;
  if (y.bid !== null && y.ask !== null) midpoint = (y.bid + y.ask) / 2;
  else if (n.bid !== null && n.ask !== null) midpoint = 1 - (n.bid + n.ask) / 2;
  else midpoint = y.last ?? yes;
  if (yes === null || no === null || midpoint === null) return null;
  return { yes: round4(yes), no: round4(no), midpoint: round4(midpoint) };
}

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
  const clobTimeoutMs = opts.clobTimeoutMs ?? 3_000;
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
      const raw = await httpJson({
        upstream: 'clob',
        url: `${opts.clobUrl}/books`,
        method: 'POST',
        body: o.event.buckets.flatMap((b) => [{ token_id: b.yesTokenId }, { token_id: b.noTokenId }]),
        timeoutMs: Math.max(1, Math.min(clobTimeoutMs, o.timeoutMs ?? Infinity)),
      });
      const books = parseUpstream(z.array(Book), raw, { upstream: 'clob', what: 'books' });
      const byToken = new Map(books.map((b) => [b.asset_id, b]));
      const priced = o.event.buckets.map((b) => ({
        label: b.label,
        odds: oddsFromBooks(byToken.get(b.yesTokenId), byToken.get(b.noTokenId)),
      }));
      if (priced.every((p) => p.odds === null)) throw new UpstreamError('clob', 'no prices for any bucket');
      return { asOfMs: opts.clock.now(), byLabel: new Map(priced.map((p) => [p.label, p.odds ?? NO_QUOTE])) };
    },
  };
}
