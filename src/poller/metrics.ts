import type { Metrics } from '../lib/metrics.ts';

/** The poller's /metrics instruments; all undefined when the poller runs without metrics. */
export function createPollerMetrics(metrics: Metrics | undefined) {
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
