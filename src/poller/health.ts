import type { Catalog } from '../cities/catalog.ts';
import { backoffMs } from '../lib/backoff.ts';
import { UpstreamError } from '../lib/errors.ts';

/** What the operator page shows per city before its first poll; times in epoch ms of the poller's clock. */
const NEVER_POLLED = {
  lastAttemptAtMs: null as number | null,
  lastOkAtMs: null as number | null,
  lastError: null as string | null,
  lastErrorAtMs: null as number | null,
  /** The last attempt found no market event for the city's day. */
  noMarket: false,
  /** Why the city's current day is paused (its rule does not match the catalog); null when not paused. */
  paused: null as string | null,
  /** Consecutive failures, 0 when the city is not backing off. */
  failures: 0,
  retryAtMs: null as number | null,
};
type CityMemo = typeof NEVER_POLLED;
type LastTick = { startedAtMs: number; durationMs: number; signals: number; errors: number };
export type PollerHealth = ReturnType<ReturnType<typeof createPollHealth>['snapshot']>;

/**
 * Per-city failure backoff: a failing city waits interval * 2^(n-1) (capped, and never less than
 * an upstream's Retry-After) before its next attempt, while the other cities keep their cadence.
 */
export function createPollHealth(catalog: Catalog, intervalMs: number, maxBackoffMs = 10 * 60_000) {
  const memo = new Map<string, CityMemo>();
  let lastTick: LastTick | null = null;
  const of = (slug: string): CityMemo => memo.get(slug) ?? memo.set(slug, { ...NEVER_POLLED }).get(slug)!;
  return {
    of,
    due: (city: string, nowMs: number) => (memo.get(city)?.retryAtMs ?? 0) <= nowMs,
    /** `error` is the failure in one line, as the operator page shows it. */
    fail: (city: string, nowMs: number, { err, error }: { err: unknown; error: string }) => {
      const m = Object.assign(of(city), { lastError: error, lastErrorAtMs: nowMs });
      const failures = ++m.failures;
      const retryAfter = err instanceof UpstreamError ? (err.retryAfterMs ?? 0) : 0;
      const retryAtMs =
        nowMs + Math.max(backoffMs(failures, intervalMs, maxBackoffMs), Math.min(retryAfter, maxBackoffMs));
      m.retryAtMs = retryAtMs;
      return { failures, retryAtMs };
    },
    ok: (city: string, nowMs: number) => {
      Object.assign(of(city), { failures: 0, retryAtMs: null, lastOkAtMs: nowMs });
    },
    tickDone: (tick: LastTick) => {
      lastTick = tick;
    },
    snapshot: () => ({
      lastTick,
      cities: catalog.active.map((c) => ({ city: c.slug, ...(memo.get(c.slug) ?? NEVER_POLLED) })),
    }),
  };
}
