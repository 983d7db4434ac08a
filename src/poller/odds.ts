import type { CityRecord } from '../cities/catalog.ts';
import type { Clock } from '../lib/clock.ts';
import { UpstreamError } from '../lib/errors.ts';
import type { MarketEvent, MarketSource, OddsSample } from '../sources/market/types.ts';

/**
 * Spec: `bucketsAsOf` trails `observedAt` by at most about 10 s, so past the budget the signal goes
 * out with `buckets: null`. Deadlines use `performance.now()`: the injected clock may be simulated.
 */
export const ODDS_DEADLINE_MS = 10_000;
/** First pause between attempts; doubles each time (250, 500, 1000, 2000 ms ...). */
const ODDS_RETRY_PAUSE_MS = 250;

type OddsResult = { odds: OddsSample; error: null } | { odds: null; error: unknown };

export function createOddsFetcher(opts: { market: MarketSource; clock: Clock; deadlineMs: number }) {
  let blockedUntilMs = 0;
  const overBudget = () => new UpstreamError(opts.market.name, `no odds within the ${opts.deadlineMs} ms budget`);

  return {
    deadlineFrom: (perfNow: number) => perfNow + opts.deadlineMs,
    sample: async (
      city: CityRecord,
      date: string,
      { event, deadline }: { event: MarketEvent; deadline: number },
    ): Promise<OddsResult> => {
      let error: unknown = null;
      for (let n = 0; ; n++) {
        if (opts.clock.now() < blockedUntilMs)
          return { odds: null, error: error ?? new UpstreamError(opts.market.name, 'odds rate-limited (Retry-After)') };
        const left = Math.floor(deadline - performance.now());
        if (left <= 0) return { odds: null, error: error ?? overBudget() };
        let timer: NodeJS.Timeout | undefined;
        try {
          // The source's call, cut at `left` even while it waits for its own rate limiter.
          const call = opts.market.odds(city, date, { event, timeoutMs: left });
          call.catch(() => undefined); // settled later than the race below: its error is already reported
          const cut = new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(overBudget()), left);
          });
          return { odds: await Promise.race([call, cut]), error: null };
        } catch (err) {
          error = err;
          if (err instanceof UpstreamError && err.retryAfterMs)
            blockedUntilMs = Math.max(blockedUntilMs, opts.clock.now() + err.retryAfterMs);
        } finally {
          clearTimeout(timer);
        }
        const pause = ODDS_RETRY_PAUSE_MS * 2 ** n;
        if (performance.now() + pause >= deadline) return { odds: null, error };
        await new Promise((r) => setTimeout(r, pause));
      }
    },
  };
}
