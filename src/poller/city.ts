import type { CityRecord } from '../cities/catalog.ts';
import { UpstreamError } from '../lib/errors.ts';
import { dailyHighReport, type Observation } from '../buckets/daily-high.ts';
import { DEFAULT_KIND } from '../buckets/rule-kinds.ts';
import type { SignalPublic } from '../signals/schemas.ts';
import { LATENCY_STAGES, latencyRowOf, stageDurations } from '../signals/latency.ts';
import type { MarketEvent } from '../sources/market/types.ts';
import type { WeatherSource } from '../sources/weather/types.ts';
import type { PollerParts } from './parts.ts';

export type CityWork = {
  city: CityRecord;
  date: string;
  event: MarketEvent;
  feed: WeatherSource;
  obs: Observation[];
  /** When the observations arrived: the reading's stamp and the signal's `observedAt`. */
  seenAtMs: number;
  /** performance.now() past which the odds of a crossing are not waited for. */
  oddsDeadline: number;
};

/** Counts the failure by its upstream (`internal`: not an upstream) and says it in one line. */
export function failure(p: PollerParts, err: unknown): string {
  p.metrics.upstreamErrors?.inc({ upstream: err instanceof UpstreamError ? err.upstream : 'internal' });
  if (err instanceof UpstreamError) return `${err.upstream}: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}

/** 'baseline' is the day's first reading; a crossing is stored in its own transaction. */
export async function processCity(p: PollerParts, w: CityWork): Promise<SignalPublic | 'baseline' | null> {
  const { city, date, event, obs, seenAtMs } = w;
  // Which reports count and the rounding are the day's rule's (src/buckets/rule-kinds.ts); a
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
  observeStages(p, signal);
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

/** The signal's steps into /metrics, the same figures GET /v1/stats/latency reads from the rows. */
function observeStages(p: PollerParts, signal: SignalPublic): void {
  const h = p.metrics.stageSeconds;
  if (!h) return;
  const d = stageDurations(latencyRowOf(signal));
  for (const stage of LATENCY_STAGES) {
    const v = d[stage];
    // The metric's label is the stage in snake case: reportToStored -> report_to_stored.
    const label = stage.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
    if (v !== null) h.observe(v / 1000, { channel: signal.channel ?? 'unknown', stage: label });
  }
}
