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
