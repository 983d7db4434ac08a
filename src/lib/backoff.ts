/**
 * The one retry-delay formula: attempt n (counting from 1) waits base * 2^(n-1), never more than
 * max. Used by the poller's per-city backoff and the delivery worker's resends; each caller decides
 * how an upstream's Retry-After combines with it.
 */
export function backoffMs(attempt: number, baseMs: number, maxMs: number): number {
  // The exponent is capped so a long streak stays a finite number (0 * Infinity would be NaN).
  return Math.min(maxMs, baseMs * 2 ** Math.min(Math.max(0, attempt - 1), 52));
}
