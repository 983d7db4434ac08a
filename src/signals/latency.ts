import type { z } from 'zod';
import type { LatencyWindowSchema, SignalPublic } from './schemas.ts';

/** Negative stages are kept: two clocks are involved and hiding their skew would misstate the figures. */
export const LATENCY_STAGES = [
  'reportToAvailable',
  'availableToObserved',
  'observedToStored',
  'reportToStored',
] as const;
type LatencyStage = (typeof LATENCY_STAGES)[number];

const LATENCY_WINDOWS = [
  { window: '24h', ms: 86_400_000 },
  { window: '7d', ms: 7 * 86_400_000 },
] as const;

/** Signals read back at most: far above a week of every city's crossings, and a bound on the work. */
export const LATENCY_MAX_ROWS = 200_000;

export const LATENCY_SPAN_MS = LATENCY_WINDOWS[LATENCY_WINDOWS.length - 1]!.ms;

type LatencyRow = ReturnType<typeof latencyRowOf>;

type LatencyWindow = z.infer<ReturnType<typeof LatencyWindowSchema>>;
type LatencyGroup = Omit<LatencyWindow['byCity'][number], 'city'>;
type Percentiles = LatencyGroup['stages'][LatencyStage];

const diff = (to: number | null, from: number | null) => (to === null || from === null ? null : to - from);

export function stageDurations(r: LatencyRow): Record<LatencyStage, number | null> {
  return {
    reportToAvailable: diff(r.availableAtMs, r.reportedAtMs),
    availableToObserved: diff(r.observedAtMs, r.availableAtMs),
    observedToStored: r.storedAtMs - r.observedAtMs,
    reportToStored: diff(r.storedAtMs, r.reportedAtMs),
  };
}

/** Nearest rank on the sorted values: a figure that some signal actually had, never an interpolation. */
export function percentiles(values: readonly number[]): Percentiles {
  const n = values.length;
  if (n === 0) return { count: 0, p50Ms: null, p90Ms: null, p99Ms: null };
  const sorted = Float64Array.from(values).sort();
  const at = (p: number) => Math.round(sorted[Math.max(0, Math.ceil((p / 100) * n) - 1)]!);
  return { count: n, p50Ms: at(50), p90Ms: at(90), p99Ms: at(99) };
}

function group(rows: readonly LatencyRow[]): LatencyGroup {
  const values = Object.fromEntries(LATENCY_STAGES.map((s) => [s, [] as number[]])) as Record<LatencyStage, number[]>;
  for (const r of rows) {
    const d = stageDurations(r);
    for (const s of LATENCY_STAGES) if (d[s] !== null) values[s].push(d[s]);
  }
  const stages = Object.fromEntries(LATENCY_STAGES.map((s) => [s, percentiles(values[s])])) as LatencyGroup['stages'];
  return { signals: rows.length, stages };
}

function groupBy(rows: readonly LatencyRow[], key: (r: LatencyRow) => string): [string, LatencyRow[]][] {
  return [...Map.groupBy(rows, key)].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** Each window's figures per source (`unknown` for a row without a channel) and per city. */
export function latencyWindows(rows: readonly LatencyRow[], nowMs: number): LatencyWindow[] {
  return LATENCY_WINDOWS.map(({ window, ms }) => {
    const from = nowMs - ms;
    const inside = rows.filter((r) => r.storedAtMs > from && r.storedAtMs <= nowMs);
    return {
      window,
      from: new Date(from).toISOString(),
      to: new Date(nowMs).toISOString(),
      signals: inside.length,
      bySource: groupBy(inside, (r) => r.channel ?? 'unknown').map(([channel, rs]) => ({ channel, ...group(rs) })),
      byCity: groupBy(inside, (r) => r.city).map(([city, rs]) => ({ city, ...group(rs) })),
    };
  });
}

const ms = (iso: string | null) => (iso === null ? null : Date.parse(iso));

export type SignalTimes = Pick<SignalPublic, 'city' | 'channel' | 'reportedAt' | 'availableAt' | 'observedAt'> & {
  storedAt?: string | null;
};

/** A signal's instants as a row of the figures: a committed one (the poller's /metrics), or a stored row's. */
export function latencyRowOf(s: SignalTimes, storedAtMs = Date.parse(s.storedAt ?? s.observedAt)) {
  return {
    city: s.city,
    channel: s.channel,
    reportedAtMs: ms(s.reportedAt),
    availableAtMs: ms(s.availableAt),
    observedAtMs: Date.parse(s.observedAt),
    storedAtMs,
  };
}
