import { localDate } from '../lib/local-day.ts';
import { ODDS_DEADLINE_MS } from './odds.ts';
import { createPollerParts } from './parts.ts';
import { runTick } from './tick.ts';
import type { Poller, PollerDeps, TickReport } from './types.ts';

export type { CityPollHealth, PollerHealth } from './health.ts';
export type { Poller, PollerDeps, TickReport } from './types.ts';
export { ODDS_DEADLINE_MS };

/**
 * The tick loop (ARCHITECTURE "Poller tick"). Per tick, for every active city not backing off:
 * its local date -> its market event (cached by the source) -> the event's resolution rule judged
 * against the catalog (match, or the city is paused for the day: src/resolution/) -> observations
 * for the station's local day from the feed the rule calls for (one batch per feed) -> daily high
 * -> detect against the committed day state -> on a crossing, odds for every bucket in one batch
 * call -> one transaction storing the signal. A tick never overlaps the next; one city's failure
 * never stops the others. The state kept between ticks is parts.ts, one tick tick.ts, one city's
 * detection and signal city.ts; per-city health is health.ts, the event-URL cache market-urls.ts,
 * the /metrics instruments metrics.ts, failure backoff backoff.ts, the odds deadline odds.ts, the
 * rule verdict day-judge.ts, the per-feed batches and cadence feed-batches.ts.
 */
export function createPoller(deps: PollerDeps): Poller {
  const { clock, logger } = deps;
  const parts = createPollerParts(deps);
  let inFlight: Promise<TickReport> | null = null;
  let timer: NodeJS.Timeout | null = null;
  let running = false;

  const tick = (): Promise<TickReport> => {
    if (!inFlight)
      inFlight = runTick(parts).finally(() => {
        inFlight = null;
      });
    return inFlight;
  };

  const loop = () => {
    if (!running) return;
    const started = clock.now();
    tick()
      .catch((err) => logger.error('tick failed', { err }))
      .finally(() => {
        if (!running) return;
        timer = setTimeout(loop, Math.max(0, deps.intervalMs - (clock.now() - started)));
      });
  };

  return {
    start: (firstTickDelayMs = 0) => {
      if (running) return;
      running = true;
      if (firstTickDelayMs > 0) timer = setTimeout(loop, firstTickDelayMs);
      else loop();
    },
    stop: async () => {
      running = false;
      if (timer) {
        clearTimeout(timer);
        timer = null;
      }
      if (inFlight) await inFlight.catch(() => undefined);
    },
    tick,
    marketUrlFor: (city, date) => parts.urls.get(city.slug, date),
    ruleFor: (city) => parts.rules.read(city.slug, localDate(city.timezone, parts.dayClock.now())),
    health: parts.health.snapshot,
  };
}
