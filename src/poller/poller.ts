import type { Observation } from '../buckets/daily-high.ts';
import type { Catalog, CityRecord } from '../cities/catalog.ts';
import type { Clock } from '../lib/clock.ts';
import { localDate } from '../lib/local-day.ts';
import type { Logger } from '../lib/logger.ts';
import type { Metrics } from '../lib/metrics.ts';
import { decideDiscovered, judgeRule, type ObservableSource } from '../resolution/judge.ts';
import { groupByReason, reasonLine, type DiscoveryStore, type RuleStore } from '../resolution/store.ts';
import type { SignalPublic } from '../signals/schemas.ts';
import type { SignalStore } from '../signals/store.ts';
import type { DiscoveredEvent } from '../sources/market/gamma.ts';
import type { MarketEvent, MarketSource } from '../sources/market/types.ts';
import type { WeatherSource } from '../sources/weather/types.ts';
import { asError } from '../sources/upstream.ts';
import { createPollHealth } from './health.ts';
import { createOddsFetcher, ODDS_DEADLINE_MS, runTick, type TickReport } from './tick.ts';

export type PollerDeps = {
  stores: { signals: SignalStore; rules: RuleStore; discovery: DiscoveryStore };
  catalog: Catalog;
  /** Real time: signal stamps, backoff. */
  clock: Clock;
  logger: Logger;
  /** Observes days whose rule resolves on Weather Underground (weather.com, or METAR as an approximation). */
  weather: WeatherSource;
  /** NOAA-rule days; absent: `weather` when that is METAR or the simulation, else those days pause. */
  noaaWeather?: WeatherSource;
  /** Observes days whose rule resolves on the Hong Kong Observatory; absent: those days are paused. */
  hkoWeather?: WeatherSource;
  /** Absent: the catalog's selection is served as it is. */
  discovery?: { list(): Promise<DiscoveredEvent[]> };
  discoveryIntervalMs?: number;
  market: MarketSource;
  intervalMs: number;
  /** Instant whose city-local date is the market day; the simulated feed passes its own clock. */
  dayClock?: Clock;
  /** Real-time budget for a crossing's odds from when the observations arrived; past it `buckets: null`. */
  oddsDeadlineMs?: number;
  onSignalInTransaction?: (signal: SignalPublic) => void;
  onSignalCommitted?: (signal: SignalPublic) => void;
  metrics?: Metrics;
};

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

  const tick = (): Promise<TickReport> =>
    (inFlight ??= runTick(parts).finally(() => {
      inFlight = null;
    }));

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

/** The poller's state, built once and kept between ticks; only tick.ts touches it. */
function createPollerParts(deps: PollerDeps) {
  const { catalog, clock, logger, stores, weather } = deps;
  const health = createPollHealth(catalog, deps.intervalMs);
  const m = deps.metrics;
  const metrics = {
    ticks: m?.counter('isocast_poll_ticks_total', 'Poller ticks completed'),
    tickSeconds: m?.histogram(
      'isocast_poll_tick_duration_seconds',
      'Wall time of one poller tick over every due city',
      [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    ),
    upstreamErrors: m?.counter(
      'isocast_upstream_errors_total',
      'Failed city polls by the upstream that failed (internal: not an upstream)',
    ),
    signalsEmitted: m?.counter('isocast_signals_total', 'Signals emitted by city'),
    // Labelled by channel and stage, not city: 37 cities x 4 stages x 14 buckets would swamp a
    // scrape; GET /v1/stats/latency has the per-city figures.
    stageSeconds: m?.histogram(
      'isocast_signal_stage_seconds',
      'Per committed signal, the seconds of each step from the station report to the stored signal ' +
        '(stage: report_to_available, available_to_observed, observed_to_stored, report_to_stored), by channel',
      [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600],
    ),
    pauses: m?.counter(
      'isocast_resolution_pauses_total',
      'City-days paused because the market rule does not match the catalog, by city',
    ),
    pausedNow: m?.gauge(
      'isocast_cities_paused',
      'Active cities whose current market day is paused (rule mismatch or unobservable source)',
    ),
  };
  const noaaWeather = deps.noaaWeather ?? (weather.name === 'metar' || weather.name === 'sim' ? weather : undefined);
  const feedFor = (s: ObservableSource): WeatherSource | undefined =>
    s === 'noaa' ? noaaWeather : s === 'hko' ? deps.hkoWeather : weather;
  const observable = (s: ObservableSource) => feedFor(s) !== undefined;

  // Event pages by (city, date) for `marketUrl` before a signal exists; only recent days are asked, so the oldest go.
  const urls = new Map<string, string>();
  const maxUrls = 4 * catalog.active.length + 16;

  const judged = new Map<string, { key: string; feed: WeatherSource | null }>();
  /** Match or pause (spec: resolution-source awareness): the feed a day's rule calls for, or null when paused. */
  function judgeDay(city: CityRecord, date: string, event: MarketEvent): WeatherSource | null {
    const verdict = judgeRule(event.rule, city, observable);
    const feed = verdict.status === 'ok' ? feedFor(verdict.observe)! : null;
    // Settling the same inputs again gives the same answer, so an unchanged day costs no transaction.
    const key = JSON.stringify([date, event.rule, verdict, feed?.name ?? null]);
    const last = judged.get(city.slug);
    if (last?.key === key) return last.feed;
    const day = stores.rules.settle({
      city: city.slug,
      date,
      rule: event.rule,
      verdict,
      feed: feed?.name ?? null,
      nowMs: clock.now(),
    });
    health.of(city.slug).paused = day.status === 'paused' ? day.reason : null;
    judged.set(city.slug, { key, feed: day.status === 'ok' ? feed : null });
    if (day.status === 'ok') return feed;
    if (day.newlyPaused) {
      metrics.pauses?.inc({ city: city.slug });
      logger.warn('city paused for the day: market rule does not match', {
        city: city.slug,
        date,
        rule: event.rule,
        reason: day.reason,
      });
    }
    return null;
  }

  const discoveryIntervalMs = deps.discoveryIntervalMs ?? 3_600_000;
  let nextDiscoveryAtMs = 0;
  /** Discovery when due; a failed run changes nothing: cities once served stay served for the process's life. */
  async function discover(nowMs: number): Promise<void> {
    if (!deps.discovery || nowMs < nextDiscoveryAtMs) return;
    let events: DiscoveredEvent[];
    try {
      events = await deps.discovery.list();
    } catch (err) {
      nextDiscoveryAtMs = nowMs + Math.min(RETRY_MS, discoveryIntervalMs);
      logger.warn('discovery failed', { error: err instanceof Error ? err.message : String(err) });
      return;
    }
    nextDiscoveryAtMs = nowMs + discoveryIntervalMs;
    const verdicts = decideDiscovered(events, catalog, observable);
    const added: string[] = [];
    for (const v of verdicts) if (v.served && v.record && catalog.serve(v.record)) added.push(v.city);
    stores.discovery.replace(verdicts, nowMs);
    const left = verdicts
      .filter((v) => !v.served && !catalog.get(v.city))
      .map((v) => ({ city: v.city, reason: v.reason ?? 'not served' }));
    const groups = groupByReason(left);
    // One field per reason ("31 streams: ...: amsterdam, ..."), not one entry per event.
    logger.info('discovery', {
      events: verdicts.length,
      served: catalog.active.length,
      newlyServed: added,
      notServed: groups.reduce((n, g) => n + g.count, 0),
      notServedByReason: groups.map(reasonLine),
    });
  }

  return {
    deps,
    dayClock: deps.dayClock ?? clock,
    /** Cities worked on at once (upstream rate limits are enforced by the sources). */
    concurrency: 8,
    odds: createOddsFetcher({ market: deps.market, clock, deadlineMs: deps.oddsDeadlineMs ?? ODDS_DEADLINE_MS }),
    observeDue: createFeedBatches(deps.intervalMs),
    urls: {
      remember(city: string, date: string, url: string): void {
        const key = `${city}|${date}`;
        urls.delete(key);
        urls.set(key, url);
        if (urls.size > maxUrls) urls.delete(urls.keys().next().value!);
      },
      get: (city: string, date: string): string | null => urls.get(`${city}|${date}`) ?? null,
    },
    health,
    metrics,
    discover,
    judgeDay,
  };
}

export type PollerParts = ReturnType<typeof createPollerParts>;

/** After a failed discovery run, the next try comes sooner than the interval, but not on every tick. */
const RETRY_MS = 5 * 60_000;

/** One observation batch per feed per tick; a feed with its own cadence (weather.com) is asked only when due. */
function createFeedBatches(intervalMs: number) {
  const lastAskedAt = new Map<WeatherSource, number>();
  // Tick start times jitter by a few ms; a feed due "now" should not slip a whole tick.
  const slackMs = Math.min(1_000, intervalMs / 2);

  return async function observeDue<D extends { city: CityRecord; date: string; feed: WeatherSource }>(
    days: D[],
    startedAtMs: number,
  ): Promise<{ asked: D[]; observations: Map<string, Observation[] | Error> }> {
    const feeds = [...new Set(days.map((d) => d.feed))].filter((feed) => {
      const last = lastAskedAt.get(feed);
      if (feed.minIntervalMs && last !== undefined && startedAtMs - last < feed.minIntervalMs - slackMs) return false;
      lastAskedAt.set(feed, startedAtMs);
      return true;
    });
    const observations = new Map<string, Observation[] | Error>();
    await Promise.all(
      feeds.map(async (feed) => {
        const batch = days.filter((d) => d.feed === feed);
        try {
          for (const [slug, obs] of await feed.observe(batch)) observations.set(slug, obs);
        } catch (err) {
          for (const d of batch) observations.set(d.city.slug, asError(err));
        }
      }),
    );
    return { asked: days.filter((d) => feeds.includes(d.feed)), observations };
  };
}
