import type { CityRecord } from '../cities/catalog.ts';
import { localDate } from '../lib/local-day.ts';
import { UpstreamError } from '../lib/errors.ts';
import type { Observation } from '../buckets/daily-high.ts';
import { mapLimit } from '../sources/rate-limit.ts';
import { failure, processCity, type CityWork } from './city.ts';
import type { PollerParts } from './parts.ts';
import type { SignalPublic } from '../signals/schemas.ts';

type CityDay = { city: CityRecord; date: string };
type WithEvent = Omit<CityWork, 'obs' | 'seenAtMs' | 'oddsDeadline'>;

/** One city's failure is recorded and backed off; it never stops the others. */
export async function runTick(p: PollerParts): Promise<TickReport> {
  const startedAtMs = p.deps.clock.now();
  const startedPerf = performance.now();
  const dayNow = p.dayClock.now();
  const report = emptyReport(startedAtMs);

  // New cities join before the tick's list is taken, so they are polled in this tick.
  await p.discover?.(startedAtMs);
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
  finish(p, report, startedPerf);
  return report;
}

export type TickReport = ReturnType<typeof emptyReport>;

function emptyReport(startedAtMs: number) {
  return {
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
}

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
    succeeded(p, d.city);
  } catch (err) {
    fail(p, report, { city: d.city, err });
  }
  return null;
}

type Observed = Omit<CityWork, 'obs'> & { obs: Observation[] | Error | undefined };

async function detect(p: PollerParts, report: TickReport, d: Observed): Promise<void> {
  try {
    if (d.obs === undefined) throw new UpstreamError(d.feed.name, 'no observations returned for the station');
    if (d.obs instanceof Error) throw d.obs;
    const signal = await processCity(p, { ...d, obs: d.obs });
    succeeded(p, d.city);
    if (signal === 'baseline') report.baselines++;
    else if (signal) report.signals.push(signal);
  } catch (err) {
    fail(p, report, { city: d.city, err });
  }
}

function succeeded(p: PollerParts, city: CityRecord): void {
  p.health.ok(city.slug);
  p.health.of(city.slug).lastOkAtMs = p.deps.clock.now();
}

function fail(p: PollerParts, report: TickReport, { city, err }: { city: CityRecord; err: unknown }): void {
  const { clock, logger } = p.deps;
  const { failures, retryAtMs } = p.health.fail(city.slug, clock.now(), err);
  const error = failure(p, err);
  report.errors.push({ city: city.slug, error });
  const m = p.health.of(city.slug);
  m.lastError = error;
  m.lastErrorAtMs = clock.now();
  logger.warn('poll failed', { city: city.slug, error, failures, retryInMs: retryAtMs - clock.now() });
}

function finish(p: PollerParts, report: TickReport, startedPerf: number): void {
  report.durationMs = p.deps.clock.now() - report.startedAtMs;
  p.health.tickDone({
    startedAtMs: report.startedAtMs,
    durationMs: report.durationMs,
    signals: report.signals.length,
    errors: report.errors.length,
  });
  p.metrics.ticks?.inc();
  // Real elapsed time: the injected clock may be simulated or hand-moved.
  p.metrics.tickSeconds?.observe((performance.now() - startedPerf) / 1000);
  if (report.signals.length > 0 || report.errors.length > 0) {
    p.deps.logger.info('tick', {
      durationMs: report.durationMs,
      cities: report.cities,
      signals: report.signals.length,
      errors: report.errors.length,
      noMarket: report.noMarket.length,
    });
  }
}
