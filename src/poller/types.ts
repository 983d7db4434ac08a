import type { Catalog } from '../cities/catalog.ts';
import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/logger.ts';
import type { Metrics } from '../lib/metrics.ts';
import type { SignalPublic } from '../signals/schemas.ts';
import type { MarketSource } from '../sources/market/types.ts';
import type { WeatherSource } from '../sources/weather/types.ts';
import type { RuleStore } from '../resolution/store.ts';
import type { DiscoveryStore } from '../resolution/discovery-store.ts';
import type { SignalStore } from '../signals/store.ts';
import type { DiscoverySource } from './discovery.ts';

export type PollerDeps = {
  /** The process's stores (src/stores.ts): signals and day state, day rules, discovered events. */
  stores: { signals: SignalStore; rules: RuleStore; discovery: DiscoveryStore };
  catalog: Catalog;
  /** Real time: signal stamps, backoff. */
  clock: Clock;
  logger: Logger;
  /** Observes days whose rule resolves on Weather Underground (weather.com, or METAR as an approximation). */
  weather: WeatherSource;
  /**
   * Observes days whose rule resolves on NOAA's station timeseries (METAR reports). Absent: `weather`
   * when that is itself METAR or the simulation, otherwise NOAA-rule days are paused.
   */
  noaaWeather?: WeatherSource;
  /** Observes days whose rule resolves on the Hong Kong Observatory; absent: those days are paused. */
  hkoWeather?: WeatherSource;
  /**
   * Daily-high events to discover (src/poller/discovery.ts), asked every `discoveryIntervalMs` at
   * the start of a tick; absent: the catalog's selection is served as it is.
   */
  discovery?: DiscoverySource;
  discoveryIntervalMs?: number;
  market: MarketSource;
  intervalMs: number;
  /** Instant whose city-local date is the market day; the simulated feed passes its own clock. */
  dayClock?: Clock;
  /**
   * Real-time budget for the odds of a crossing, counted from when the observations arrived; past
   * it the signal is stored with `buckets: null` (default ODDS_DEADLINE_MS, 10 s).
   */
  oddsDeadlineMs?: number;
  onSignalInTransaction?: (signal: SignalPublic) => void;
  onSignalCommitted?: (signal: SignalPublic) => void;
  metrics?: Metrics;
};
