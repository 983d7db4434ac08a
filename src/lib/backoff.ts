/** Attempt n (from 1) waits base * 2^(n-1), at most max; each caller combines it with Retry-After. */
export function backoffMs(attempt: number, baseMs: number, maxMs: number): number {
  // The exponent is capped so a long streak stays a finite number (0 * Infinity would be NaN).
  return Math.min(maxMs, baseMs * 2 ** Math.min(Math.max(0, attempt - 1), 52));
}
