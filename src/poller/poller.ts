import { localDate } from '../lib/local-day.ts';
import { createPollerParts, type PollerDeps } from './parts.ts';
import { runTick, type TickReport } from './tick.ts';
import type { CityRecord } from '../cities/catalog.ts';

export type Poller = ReturnType<typeof createPoller>;

/**
 * The tick loop (docs/architecture.md "Poller tick"). A tick never overlaps the next, and one
 * city's failure never stops the others; whether a crossing becomes a signal is decided again in
 * the signal store's transaction, so a repeated tick or a restart cannot duplicate one.
 */
export function createPoller(deps: PollerDeps) {
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
      clearTimeout(timer ?? undefined);
      timer = null;
      if (inFlight) await inFlight.catch(() => undefined);
    },
    tick,
    /** Event page of the city's market for a date once the poller has seen that event. */
    marketUrlFor: (city: CityRecord, date: string) => parts.urls.get(city.slug, date),
    /** The parsed rule and verdict of the city's current market day, once the poller has read its event. */
    ruleFor: (city: CityRecord) =>
      parts.deps.stores.rules.read(city.slug, localDate(city.timezone, parts.dayClock.now())),
    /** In-memory state since start: last tick, and per active city its last attempt, success, error and backoff. */
    health: parts.health.snapshot,
  };
}
