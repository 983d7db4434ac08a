import type { CityRecord } from '../cities/catalog.ts';
import type { Clock } from '../lib/clock.ts';
import { localDate } from '../lib/local-day.ts';
import { UpstreamError } from '../lib/errors.ts';
import { DEFAULT_KIND, dailyHighReport, type Observation } from '../buckets/daily-high.ts';
import type { SignalPublic } from '../signals/schemas.ts';
import { LATENCY_STAGES, latencyRowOf, stageDurations } from '../signals/latency.ts';
import type { MarketEvent, MarketSource } from '../sources/market/types.ts';
import { mapLimit } from '../sources/upstream.ts';
import type { WeatherSource } from '../sources/weather/types.ts';
import type { PollerParts } from './poller.ts';

type CityDay = { city: CityRecord; date: string };
type WithEvent = CityDay & { event: MarketEvent; feed: WeatherSource };
type CityWork = WithEvent & {
  /** Absent: the feed's answer left the station out. */
  obs: Observation[] | Error | undefined;
  /** When the observations arrived: the reading's stamp and the signal's `observedAt`. */
  seenAtMs: number;
  /** performance.now() past which the odds of a crossing are not waited for. */
  oddsDeadline: number;
};

/** One city's failure is recorded and backed off; it never stops the others. */
export async function runTick(p: PollerParts) {
  const startedAtMs = p.deps.clock.now();
  const startedPerf = performance.now();
  const dayNow = p.dayClock.now();
  const report = {
    startedAtMs,
    durationMs: 0,
    cities: 0,
    signals: [] as SignalPublic[],
    baselines: 0,
    noMarket: [] as string[],
    /** Cities whose day is paused: the market's rule and the catalog disagree, or nothing can observe it. */
    paused: [] as string[],
    backingOff: [] as string[],
    /** Cities with an event whose feed was not due this tick (a feed with its own slower cadence). */
    waitingForFeed: 0,
    errors: [] as { city: string; error: string }[],
  };

  // New cities join before the tick's list is taken, so they are polled in this tick.
  await p.discover(startedAtMs);
  const due = p.deps.catalog.active.filter((c) => {
    if (p.health.due(c.slug, startedAtMs)) return true;
    report.backingOff.push(c.slug);
    return false;
  });
  report.cities = due.length;
  for (const c of due) p.health.of(c.slug).lastAttemptAtMs = startedAtMs;
  const days = due.map((city) => ({ city, date: localDate(city.timezone, dayNow) }));
  const withEvents = (await mapLimit(days, p.concurrency, (d) => eventOf(p, report, d))).filter((x) => x !== null);
  p.metrics.pausedNow?.set(report.paused.length);

  const { asked, observations } = await p.observeDue(withEvents, startedAtMs);
  report.waitingForFeed = withEvents.length - asked.length;
  const seenAtMs = p.deps.clock.now();
  const oddsDeadline = p.odds.deadlineFrom(performance.now());

  await mapLimit(asked, p.concurrency, (d) =>
    detect(p, report, { ...d, obs: observations.get(d.city.slug), seenAtMs, oddsDeadline }),
  );
  report.durationMs = p.deps.clock.now() - startedAtMs;
  const counts = { signals: report.signals.length, errors: report.errors.length };
  p.health.tickDone({ startedAtMs, durationMs: report.durationMs, ...counts });
  p.metrics.ticks?.inc();
  // Real elapsed time: the injected clock may be simulated or hand-moved.
  p.metrics.tickSeconds?.observe((performance.now() - startedPerf) / 1000);
  if (counts.signals > 0 || counts.errors > 0)
    p.deps.logger.info('tick', {
      durationMs: report.durationMs,
      cities: report.cities,
      ...counts,
      noMarket: report.noMarket.length,
    });
  return report;
}

export type TickReport = Awaited<ReturnType<typeof runTick>>;

async function eventOf(p: PollerParts, report: TickReport, d: CityDay): Promise<WithEvent | null> {
  const { market } = p.deps;
  const memo = p.health.of(d.city.slug);
  try {
    const event = await market.event(d.city, d.date);
    memo.noMarket = !event;
    if (!event) memo.paused = null;
    else if (event.buckets.some((b) => b.unit !== d.city.unit))
      throw new UpstreamError(market.name, `market buckets are not in °${d.city.unit}`);
    else p.urls.remember(d.city.slug, d.date, event.url);
    const feed = event && p.judgeDay(d.city, d.date, event);
    if (feed) return { ...d, event, feed };
    (event ? report.paused : report.noMarket).push(d.city.slug);
    p.health.ok(d.city.slug, p.deps.clock.now());
  } catch (err) {
    fail(p, report, { city: d.city, err });
  }
  return null;
}

async function detect(p: PollerParts, report: TickReport, d: CityWork): Promise<void> {
  try {
    const signal = await processCity(p, d);
    p.health.ok(d.city.slug, p.deps.clock.now());
    if (signal === 'baseline') report.baselines++;
    else if (signal) report.signals.push(signal);
  } catch (err) {
    fail(p, report, { city: d.city, err });
  }
}

function fail(p: PollerParts, report: TickReport, { city, err }: { city: CityRecord; err: unknown }): void {
  const { clock, logger } = p.deps;
  const error = failure(p, err);
  const { failures, retryAtMs } = p.health.fail(city.slug, clock.now(), { err, error });
  report.errors.push({ city: city.slug, error });
  logger.warn('poll failed', { city: city.slug, error, failures, retryInMs: retryAtMs - clock.now() });
}

/** Counts the failure by its upstream (`internal`: not an upstream) and says it in one line. */
function failure(p: PollerParts, err: unknown): string {
  p.metrics.upstreamErrors?.inc({ upstream: err instanceof UpstreamError ? err.upstream : 'internal' });
  if (err instanceof UpstreamError) return `${err.upstream}: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}

/** 'baseline' is the day's first reading; a crossing is stored in its own transaction. */
async function processCity(p: PollerParts, w: CityWork): Promise<SignalPublic | 'baseline' | null> {
  const { city, date, event, obs, seenAtMs } = w;
  if (obs === undefined) throw new UpstreamError(w.feed.name, 'no observations returned for the station');
  if (obs instanceof Error) throw obs;
  // Which reports count and the rounding are the day's rule's (src/buckets/daily-high.ts); a
  // low stream reads the same reports for the day's minimum.
  const high = dailyHighReport(obs, {
    timezone: city.timezone,
    date,
    unit: city.unit,
    kind: event.rule.kind ?? DEFAULT_KIND,
    extreme: city.kind,
  });
  if (high === null) return null;
  const base = { city, targetDate: date, reading: high.reading, buckets: event.buckets, nowMs: seenAtMs };
  const d = p.deps.stores.signals.saveReading(base);
  if (!d.crossing) return d.baseline ? 'baseline' : null;

  // The crossing is a fact: odds get until the deadline, then the signal goes out without them.
  const sampled = await p.odds.sample(city, date, { event, deadline: w.oddsDeadline });
  if (sampled.error !== null)
    p.deps.logger.warn('storing signal without odds', {
      city: city.slug,
      bucket: d.crossing.new.bucket,
      error: failure(p, sampled.error),
    });
  const signal = p.deps.stores.signals.storeSignal(
    {
      ...base,
      nowMs: p.deps.clock.now(),
      marketUrl: event.url,
      conditionId: event.conditionId,
      odds: sampled.odds,
      source: w.feed.name,
      observedAtMs: seenAtMs,
      // The station's report time is never after we received it (the sim stamps it in simulated time).
      reportedAtMs: Math.min(w.feed.reportedAtReal?.(high.reportedAtMs) ?? high.reportedAtMs, seenAtMs),
      provenance: {
        channel: w.feed.channel ?? w.feed.name,
        rawReport: high.report.raw ?? null,
        reportedValue: high.report.temp,
        reportedUnit: high.report.unit,
        reportedPrecision: high.report.precision ?? null,
        // As the source stamped it, never adjusted: a dispute compares it with the source's own record.
        availableAt: high.report.availableAtMs === undefined ? null : new Date(high.report.availableAtMs).toISOString(),
      },
    },
    { inTransaction: p.deps.onSignalInTransaction },
  );
  if (signal) announce(p, signal);
  return signal;
}

function announce(p: PollerParts, signal: SignalPublic): void {
  const { logger } = p.deps;
  p.metrics.signalsEmitted?.inc({ city: signal.city });
  // The signal's steps into /metrics, the same figures GET /v1/stats/latency reads from the rows.
  const h = p.metrics.stageSeconds;
  if (h) {
    const d = stageDurations(latencyRowOf(signal));
    for (const stage of LATENCY_STAGES) {
      const v = d[stage];
      const label = stage.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
      if (v !== null) h.observe(v / 1000, { channel: signal.channel ?? 'unknown', stage: label });
    }
  }
  logger.info('signal', {
    city: signal.city,
    seq: signal.seq,
    targetDate: signal.targetDate,
    from: signal.old.bucket,
    to: signal.new.bucket,
  });
  try {
    p.deps.onSignalCommitted?.(signal);
  } catch (err) {
    logger.error('onSignalCommitted failed', { city: signal.city, err });
  }
}

/**
 * Spec: `bucketsAsOf` trails `observedAt` by at most about 10 s, so past the budget the signal goes
 * out with `buckets: null`. Deadlines use `performance.now()`: the injected clock may be simulated.
 */
export const ODDS_DEADLINE_MS = 10_000;
/** First pause between attempts; doubles each time (250, 500, 1000, 2000 ms ...). */
const ODDS_RETRY_PAUSE_MS = 250;

export function createOddsFetcher(opts: { market: MarketSource; clock: Clock; deadlineMs: number }) {
  let blockedUntilMs = 0;
  const overBudget = () => new UpstreamError(opts.market.name, `no odds within the ${opts.deadlineMs} ms budget`);

  return {
    deadlineFrom: (perfNow: number) => perfNow + opts.deadlineMs,
    sample: async (city: CityRecord, date: string, { event, deadline }: { event: MarketEvent; deadline: number }) => {
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
