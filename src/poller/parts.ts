import type { ObservableSource } from '../resolution/judge.ts';
import type { WeatherSource } from '../sources/weather/types.ts';
import { createBackoff } from './backoff.ts';
import { createOddsFetcher, ODDS_DEADLINE_MS } from './odds.ts';
import { createPollHealth } from './health.ts';
import { createMarketUrls } from './market-urls.ts';
import { createDayJudge } from './day-judge.ts';
import { createFeedBatches } from './feed-batches.ts';
import { createPollerMetrics } from './metrics.ts';
import { createDiscoveryRun } from './discovery.ts';
import type { PollerDeps } from './types.ts';

/**
 * The poller's state, built once and kept between ticks: backoff, health, the event-URL cache, the
 * feed cadences, the stores, the rule verdicts and the /metrics instruments. The tick (tick.ts)
 * and each city's work (city.ts) read and update it; nothing else does.
 */
export function createPollerParts(deps: PollerDeps) {
  const { catalog, clock, logger, weather } = deps;
  const backoff = createBackoff(deps.intervalMs);
  const odds = createOddsFetcher({ market: deps.market, clock, deadlineMs: deps.oddsDeadlineMs ?? ODDS_DEADLINE_MS });
  const observeDue = createFeedBatches(deps.intervalMs);
  const { signals, rules } = deps.stores;
  const urls = createMarketUrls(4 * catalog.active.length + 16);
  const health = createPollHealth(catalog, backoff);
  const metrics = createPollerMetrics(deps.metrics);
  const noaaWeather = deps.noaaWeather ?? (weather.name === 'metar' || weather.name === 'sim' ? weather : undefined);
  const feedFor = (s: ObservableSource): WeatherSource | undefined =>
    s === 'noaa' ? noaaWeather : s === 'hko' ? deps.hkoWeather : weather;
  const discover = deps.discovery
    ? createDiscoveryRun({
        store: deps.stores.discovery,
        catalog,
        logger,
        source: deps.discovery,
        intervalMs: deps.discoveryIntervalMs ?? 3_600_000,
        canObserve: (s) => feedFor(s) !== undefined,
      })
    : null;
  const judgeDay = createDayJudge({
    rules,
    clock,
    logger,
    feedFor,
    notePaused: (slug, reason) => {
      health.of(slug).paused = reason;
    },
    onPause: (slug) => metrics.pauses?.inc({ city: slug }),
  });
  const dayClock = deps.dayClock ?? clock;
  return {
    deps,
    dayClock,
    /** Cities worked on at once (upstream rate limits are enforced by the sources). */
    concurrency: 8,
    backoff,
    odds,
    observeDue,
    signals,
    rules,
    urls,
    health,
    metrics,
    discover,
    judgeDay,
  };
}

export type PollerParts = ReturnType<typeof createPollerParts>;
