import { backoffMs } from '../lib/backoff.ts';
import { UpstreamError } from '../lib/errors.ts';

/**
 * Per-city failure backoff: a failing city waits interval * 2^(n-1) (capped, and never less than
 * an upstream's Retry-After) before its next attempt, while the other cities keep their cadence.
 */
const MAX_BACKOFF_MS = 10 * 60_000;

export type Backoff = ReturnType<typeof createBackoff>;

export function createBackoff(intervalMs: number, maxMs = MAX_BACKOFF_MS) {
  const state = new Map<string, { failures: number; retryAtMs: number }>();
  return {
    due: (city: string, nowMs: number) => (state.get(city)?.retryAtMs ?? 0) <= nowMs,
    fail: (city: string, nowMs: number, err: unknown) => {
      const failures = (state.get(city)?.failures ?? 0) + 1;
      const wait = backoffMs(failures, intervalMs, maxMs);
      const retryAfter = err instanceof UpstreamError ? (err.retryAfterMs ?? 0) : 0;
      const next = { failures, retryAtMs: nowMs + Math.max(wait, Math.min(retryAfter, maxMs)) };
      state.set(city, next);
      return next;
    },
    ok: (city: string) => {
      state.delete(city);
    },
    /** The city's current failure streak and retry time, or null when it is not backing off. */
    state: (city: string) => state.get(city) ?? null,
  };
}
