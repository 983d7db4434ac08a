import type { ObservableSource } from '../resolution/judge.ts';
import type { WeatherSource } from '../sources/weather/types.ts';
import { createBackoff } from './backoff.ts';
import { createOddsFetcher, ODDS_DEADLINE_MS } from './odds.ts';
import { createPollHealth } from './health.ts';
import { createDayJudge } from './day-judge.ts';
import { createFeedBatches } from './feed-batches.ts';
import { createDiscoveryRun } from './discovery.ts';
import type { PollerDeps } from './types.ts';
import type { Metrics } from '../lib/metrics.ts';

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

/**
 * Event pages the poller has seen, by (city, local date), for the signal routes' `marketUrl`
 * before a signal exists. Only recent days are asked for, so the oldest entries are dropped past
 * `maxEntries` (a Map keeps insertion order; a re-remembered key moves to the end).
 */
function createMarketUrls(maxEntries: number) {
  const urls = new Map<string, string>();
  return {
    remember(city: string, date: string, url: string): void {
      const key = `${city}|${date}`;
      urls.delete(key);
      urls.set(key, url);
      if (urls.size > maxEntries) urls.delete(urls.keys().next().value!);
    },
    get: (city: string, date: string): string | null => urls.get(`${city}|${date}`) ?? null,
  };
}

/** The poller's /metrics instruments; all undefined when the poller runs without metrics. */
function createPollerMetrics(metrics: Metrics | undefined) {
  return {
    ticks: metrics?.counter('isocast_poll_ticks_total', 'Poller ticks completed'),
    tickSeconds: metrics?.histogram(
      'isocast_poll_tick_duration_seconds',
      'Wall time of one poller tick over every due city',
      [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    ),
    upstreamErrors: metrics?.counter(
      'isocast_upstream_errors_total',
      'Failed city polls by the upstream that failed (internal: not an upstream)',
    ),
    signalsEmitted: metrics?.counter('isocast_signals_total', 'Signals emitted by city'),
    // Labelled by channel and stage, not city: 37 cities x 4 stages x 14 buckets would swamp a
    // scrape; GET /v1/stats/latency has the per-city figures.
    stageSeconds: metrics?.histogram(
      'isocast_signal_stage_seconds',
      'Per committed signal, the seconds of each step from the station report to the stored signal ' +
        '(stage: report_to_available, available_to_observed, observed_to_stored, report_to_stored), by channel',
      [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600],
    ),
    pauses: metrics?.counter(
      'isocast_resolution_pauses_total',
      'City-days paused because the market rule does not match the catalog, by city',
    ),
    pausedNow: metrics?.gauge(
      'isocast_cities_paused',
      'Active cities whose current market day is paused (rule mismatch or unobservable source)',
    ),
  };
}
