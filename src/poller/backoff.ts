import { backoffMs } from '../lib/backoff.ts';
import { UpstreamError } from '../lib/errors.ts';

/**
 * Per-city failure backoff: a failing city waits interval * 2^(n-1) (capped, and never less than
 * an upstream's Retry-After) before its next attempt, while the other cities keep their cadence.
 */
const MAX_BACKOFF_MS = 10 * 60_000;

export type Backoff = {
  due(city: string, nowMs: number): boolean;
  fail(city: string, nowMs: number, err: unknown): { failures: number; retryAtMs: number };
  ok(city: string): void;
  /** The city's current failure streak and retry time, or null when it is not backing off. */
  state(city: string): { failures: number; retryAtMs: number } | null;
};

export function createBackoff(intervalMs: number, maxMs = MAX_BACKOFF_MS): Backoff {
  const state = new Map<string, { failures: number; retryAtMs: number }>();
  return {
    due: (city, nowMs) => (state.get(city)?.retryAtMs ?? 0) <= nowMs,
    fail: (city, nowMs, err) => {
      const failures = (state.get(city)?.failures ?? 0) + 1;
      const wait = backoffMs(failures, intervalMs, maxMs);
      const retryAfter = err instanceof UpstreamError ? (err.retryAfterMs ?? 0) : 0;
      const next = { failures, retryAtMs: nowMs + Math.max(wait, Math.min(retryAfter, maxMs)) };
      state.set(city, next);
      return next;
    },
    ok: (city) => {
      state.delete(city);
    },
    state: (city) => state.get(city) ?? null,
  };
}
