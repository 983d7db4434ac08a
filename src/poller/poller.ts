import type { Db } from '../db/open.ts';
import type { Catalog, CityRecord } from '../cities/catalog.ts';
import { localDate } from '../cities/local-day.ts';
import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/logger.ts';
import type { Metrics } from '../lib/metrics.ts';
import { UpstreamError } from '../lib/errors.ts';
import { dailyHighReport } from '../buckets/daily-high.ts';
import type { Observation } from '../buckets/daily-high.ts';
import { DEFAULT_KIND } from '../buckets/rule-kinds.ts';
import type { SignalPublic } from '../signals/schemas.ts';
import { createSignalStore } from '../signals/store.ts';
import type { MarketEvent, MarketSource } from '../sources/market/types.ts';
import type { WeatherSource } from '../sources/weather/types.ts';
import { mapLimit } from '../sources/rate-limit.ts';
import type { ObservableSource } from '../resolution/judge.ts';
import { createRuleStore, type DayRule } from '../resolution/store.ts';
import { createBackoff } from './backoff.ts';
import { createOddsFetcher, ODDS_DEADLINE_MS } from './odds.ts';
import { createPollHealth, type PollerHealth } from './health.ts';
import { createMarketUrls } from './market-urls.ts';
import { createDayJudge } from './day-judge.ts';
import { createFeedBatches } from './feed-batches.ts';
import { createPollerMetrics } from './metrics.ts';
import { createDiscoveryRun, type DiscoverySource } from './discovery.ts';

export type { CityPollHealth, PollerHealth } from './health.ts';

/**
 * The tick loop (ARCHITECTURE "Poller tick"). Per tick, for every active city not backing off:
 * its local date -> its market event (cached by the source) -> the event's resolution rule judged
 * against the catalog (match, or the city is paused for the day: src/resolution/) -> observations
 * for the station's local day from the feed the rule calls for (one batch per feed) -> daily high
 * -> detect against the committed day state -> on a crossing, odds for every bucket in one batch
 * call -> one transaction storing the signal. A tick never overlaps the next; one city's failure
 * never stops the others. Per-city health is health.ts, the event-URL cache market-urls.ts, the
 * /metrics instruments metrics.ts, failure backoff backoff.ts, the odds deadline odds.ts, the
 * rule verdict day-judge.ts, the per-feed batches and cadence feed-batches.ts.
 */
export type PollerDeps = {
  db: Db;
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
  /** Cities worked on at once (upstream rate limits are enforced by the sources). */
  concurrency?: number;
  /**
   * Real-time budget for the odds of a crossing, counted from when the observations arrived; past
   * it the signal is stored with `buckets: null` (default ODDS_DEADLINE_MS, 10 s).
   */
  oddsDeadlineMs?: number;
  onSignalInTransaction?: (signal: SignalPublic) => void;
  onSignalCommitted?: (signal: SignalPublic) => void;
  /** Ticks, tick durations, upstream errors and signals go here for /metrics. */
  metrics?: Metrics;
};

export type TickReport = {
  startedAtMs: number;
  durationMs: number;
  cities: number;
  signals: SignalPublic[];
  baselines: number;
  noMarket: string[];
  /** Cities whose day is paused: the market's rule and the catalog disagree, or nothing can observe it. */
  paused: string[];
  backingOff: string[];
  /** Cities with an event whose feed was not due this tick (a feed with its own slower cadence). */
  waitingForFeed: number;
  errors: { city: string; error: string }[];
};

export type Poller = {
  /** Begins ticking; the first tick after `firstTickDelayMs` (default at once). */
  start(firstTickDelayMs?: number): void;
  stop(): Promise<void>;
  tick(): Promise<TickReport>;
  /** Event page of the city's market for a date once the poller has seen that event. */
  marketUrlFor(city: CityRecord, date: string): string | null;
  /** In-memory state since start: last tick, and per active city its last attempt, success, error and backoff. */
  health(): PollerHealth;
  /** The parsed rule and verdict of the city's current market day, once the poller has read its event. */
  ruleFor(city: CityRecord): DayRule | null;
};

export { ODDS_DEADLINE_MS };

export function createPoller(deps: PollerDeps): Poller {
  const { db, catalog, clock, logger, weather, market } = deps;
  const dayClock = deps.dayClock ?? clock;
  const concurrency = deps.concurrency ?? 8;
  const backoff = createBackoff(deps.intervalMs);
  const odds = createOddsFetcher({ market, clock, deadlineMs: deps.oddsDeadlineMs ?? ODDS_DEADLINE_MS });
  const observeDue = createFeedBatches(deps.intervalMs);
  const signals = createSignalStore(db);
  const rules = createRuleStore(db);
  const urls = createMarketUrls(4 * catalog.active.length + 16);
  const health = createPollHealth(catalog, backoff);
  const memoOf = health.of;
  const { ticks, tickSeconds, upstreamErrors, signalsEmitted, pauses, pausedNow } = createPollerMetrics(deps.metrics);
  const noaaWeather = deps.noaaWeather ?? (weather.name === 'metar' || weather.name === 'sim' ? weather : undefined);
  const feedFor = (s: ObservableSource): WeatherSource | undefined =>
    s === 'noaa' ? noaaWeather : s === 'hko' ? deps.hkoWeather : weather;
  const discover = deps.discovery
    ? createDiscoveryRun({
        db,
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
      memoOf(slug).paused = reason;
    },
    onPause: (slug) => pauses?.inc({ city: slug }),
  });
  let inFlight: Promise<TickReport> | null = null;
  let timer: NodeJS.Timeout | null = null;
  let running = false;

  async function runTick(): Promise<TickReport> {
    const startedAtMs = clock.now();
    const startedPerf = performance.now();
    const dayNow = dayClock.now();
    const report: TickReport = {
      startedAtMs,
      durationMs: 0,
      cities: 0,
      signals: [],
      baselines: 0,
      noMarket: [],
      paused: [],
      backingOff: [],
      waitingForFeed: 0,
      errors: [],
    };
    const fail = (city: CityRecord, err: unknown) => {
      const { failures, retryAtMs } = backoff.fail(city.slug, clock.now(), err);
      const error = describe(err);
      report.errors.push({ city: city.slug, error });
      const m = memoOf(city.slug);
      m.lastError = error;
      m.lastErrorAtMs = clock.now();
      upstreamErrors?.inc({ upstream: err instanceof UpstreamError ? err.upstream : 'internal' });
      logger.warn('poll failed', { city: city.slug, error, failures, retryInMs: retryAtMs - clock.now() });
    };

    // New cities join before the tick's list is taken, so they are polled in this tick.
    await discover?.(startedAtMs);
    const due = catalog.active.filter((c) => {
      if (backoff.due(c.slug, startedAtMs)) return true;
      report.backingOff.push(c.slug);
      return false;
    });
    report.cities = due.length;
    for (const c of due) memoOf(c.slug).lastAttemptAtMs = startedAtMs;
    const days = due.map((city) => ({ city, date: localDate(city.timezone, dayNow) }));

    const withEvents = (
      await mapLimit(days, concurrency, async (d) => {
        try {
          const event = await market.event(d.city, d.date);
          memoOf(d.city.slug).noMarket = !event;
          if (!event) memoOf(d.city.slug).paused = null;
          if (!event) {
            report.noMarket.push(d.city.slug);
            backoff.ok(d.city.slug);
            memoOf(d.city.slug).lastOkAtMs = clock.now();
            return null;
          }
          if (event.buckets.some((b) => b.unit !== d.city.unit))
            throw new UpstreamError(market.name, `market buckets are not in °${d.city.unit}`);
          urls.remember(d.city.slug, d.date, event.url);
          const feed = judgeDay(d.city, d.date, event);
          if (!feed) {
            report.paused.push(d.city.slug);
            backoff.ok(d.city.slug);
            memoOf(d.city.slug).lastOkAtMs = clock.now();
            return null;
          }
          return { ...d, event, feed };
        } catch (err) {
          fail(d.city, err);
          return null;
        }
      })
    ).filter((x) => x !== null);
    pausedNow?.set(report.paused.length);

    // One batch per feed, each feed only when its own cadence says it is due (feed-batches.ts).
    const { asked, observations } = await observeDue(withEvents, startedAtMs);
    report.waitingForFeed = withEvents.length - asked.length;
    const seenAtMs = clock.now();
    const oddsDeadline = odds.deadlineFrom(performance.now());

    await mapLimit(asked, concurrency, async (d) => {
      const obs = observations.get(d.city.slug);
      try {
        if (obs === undefined) throw new UpstreamError(d.feed.name, 'no observations returned for the station');
        if (obs instanceof Error) throw obs;
        const signal = await processCity(d.city, d.date, d.event, d.feed, obs, seenAtMs, oddsDeadline);
        backoff.ok(d.city.slug);
        memoOf(d.city.slug).lastOkAtMs = clock.now();
        if (signal === 'baseline') report.baselines++;
        else if (signal) report.signals.push(signal);
      } catch (err) {
        fail(d.city, err);
      }
    });

    report.durationMs = clock.now() - startedAtMs;
    health.tickDone({
      startedAtMs,
      durationMs: report.durationMs,
      signals: report.signals.length,
      errors: report.errors.length,
    });
    ticks?.inc();
    // Real elapsed time: the injected clock may be simulated or hand-moved.
    tickSeconds?.observe((performance.now() - startedPerf) / 1000);
    if (report.signals.length > 0 || report.errors.length > 0) {
      logger.info('tick', {
        durationMs: report.durationMs,
        cities: report.cities,
        signals: report.signals.length,
        errors: report.errors.length,
        noMarket: report.noMarket.length,
      });
    }
    return report;
  }

  async function processCity(
    city: CityRecord,
    date: string,
    event: MarketEvent,
    feed: WeatherSource,
    obs: Observation[],
    seenAtMs: number,
    oddsDeadline: number,
  ): Promise<SignalPublic | 'baseline' | null> {
    // Which reports count and the rounding are the day's rule's (src/buckets/rule-kinds.ts); a
    // low stream reads the same reports for the day's minimum.
    const high = dailyHighReport(obs, city.timezone, date, city.unit, event.rule.kind ?? DEFAULT_KIND, city.kind);
    if (high === null) return null;
    const base = { city, targetDate: date, reading: high.reading, buckets: event.buckets, nowMs: seenAtMs };
    const d = signals.saveReading(base);
    if (!d.crossing) return d.baseline ? 'baseline' : null;

    // The crossing is a fact: odds get until the deadline, then the signal goes out without them.
    const sampled = await odds.sample(city, date, event, oddsDeadline);
    if (sampled.error !== null) {
      const err = sampled.error;
      upstreamErrors?.inc({ upstream: err instanceof UpstreamError ? err.upstream : 'internal' });
      logger.warn('storing signal without odds', {
        city: city.slug,
        bucket: d.crossing.new.bucket,
        error: describe(err),
      });
    }
    const signal = signals.storeSignal(
      {
        ...base,
        nowMs: clock.now(),
        marketUrl: event.url,
        conditionId: event.conditionId,
        odds: sampled.odds,
        source: feed.name,
        observedAtMs: seenAtMs,
        // The station's report time is never after we received it (the sim stamps it in simulated time).
        reportedAtMs: Math.min(feed.reportedAtReal?.(high.reportedAtMs) ?? high.reportedAtMs, seenAtMs),
      },
      { inTransaction: deps.onSignalInTransaction },
    );
    if (signal) {
      signalsEmitted?.inc({ city: city.slug });
      logger.info('signal', {
        city: city.slug,
        seq: signal.seq,
        targetDate: date,
        from: signal.old.bucket,
        to: signal.new.bucket,
      });
      try {
        deps.onSignalCommitted?.(signal);
      } catch (err) {
        logger.error('onSignalCommitted failed', { city: city.slug, err });
      }
    }
    return signal;
  }

  const tick = (): Promise<TickReport> => {
    if (!inFlight)
      inFlight = runTick().finally(() => {
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
    marketUrlFor: (city, date) => urls.get(city.slug, date),
    ruleFor: (city) => rules.read(city.slug, localDate(city.timezone, dayClock.now())),
    health: health.snapshot,
  };
}

function describe(err: unknown): string {
  if (err instanceof UpstreamError) return `${err.upstream}: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}
