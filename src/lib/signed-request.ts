import { signatureVerificationFailed, staleTimestamp } from './api-errors.ts';

/**
 * The clock rule every signed request shares (spec 8): a signed instant may be at most
 * SIGNED_REQUEST_SKEW_SEC from server time, either way, and is refused with `stale timestamp`
 * otherwise. Chat registrations, receipt requests and revocations, and wallet sign-ins
 * (sign-in-with-x) all use it, so a buyer's clock that one of them accepts, every one accepts.
 */
export const SIGNED_REQUEST_SKEW_SEC = 600;
const SKEW_MS = SIGNED_REQUEST_SKEW_SEC * 1000;

/** The rule as a schema's description and a refusal's reason say it. */
export const SKEW_RULE = `within ${SIGNED_REQUEST_SKEW_SEC} s of server time`;

/**
 * Where a signed instant (unix ms) stands against the skew window around `nowMs`: `ahead` or
 * `behind` by more than the skew, or null inside it (exactly the skew is inside).
 */
export function skewOf(nowMs: number, signedMs: number): 'ahead' | 'behind' | null {
  if (signedMs - nowMs > SKEW_MS) return 'ahead';
  if (nowMs - signedMs > SKEW_MS) return 'behind';
  return null;
}

/**
 * True when `timestampSec` (unix seconds) is outside the skew window around `nowMs`. Compared in
 * whole seconds: the server's clock is truncated to the unit the client signed.
 */
export function isStaleTimestamp(nowMs: number, timestampSec: number): boolean {
  return skewOf(Math.floor(nowMs / 1000) * 1000, timestampSec * 1000) !== null;
}

/**
 * A signed request that names its own lifetime (a sign-in's issuedAt and expirationTime, unix ms;
 * its issue instant is checked with `skewOf` first, and may lag without limit: the expiry bounds
 * it). The expiry must not have passed and is at most one skew window after both now and the
 * issue instant, so a copy is worth no more than a signed timestamp is. The caller words the
 * refusal.
 */
export function signedLifetime(r: {
  nowMs: number;
  issuedAtMs: number;
  expiresAtMs: number;
}): 'expired' | 'tooLong' | null {
  if (r.expiresAtMs <= r.nowMs) return 'expired';
  // Both bounds: without the one from issuedAt, a request made to last a day would be refused
  // until its last ten minutes and then work.
  if (r.expiresAtMs - r.nowMs > SKEW_MS || r.expiresAtMs - r.issuedAtMs > SKEW_MS) return 'tooLong';
  return null;
}

/**
 * The two refusals every signed request shares, in the spec's order: the clock first (no
 * signature recovery for a stale body), then the signature. `refusedFor` may say why the
 * signature was refused (a receipt request signed for another origin names this one).
 */
export async function checkSignedRequest(r: {
  nowMs: number;
  timestamp: number;
  verify: () => Promise<boolean>;
  refusedFor?: () => string | undefined;
}): Promise<void> {
  if (isStaleTimestamp(r.nowMs, r.timestamp)) throw staleTimestamp();
  if (!(await r.verify())) throw signatureVerificationFailed(r.refusedFor?.());
}

/**
 * Single-use bookkeeping: a use recorded for a signed request can be forgotten once that request
 * would be refused by the clock rule anyway. Rows are aged by an instant each table already indexes
 * (the signed timestamp, or the expiry a signed request carries), in seconds or ms; a row whose
 * instant is more than twice the skew before now is dropped, one window past the last moment its
 * request could pass, so a server clock stepped back by less than the skew still refuses a copy.
 */
export function singleUseCutoff(nowMs: number, unit: 's' | 'ms'): number {
  const cutoffMs = nowMs - 2 * SKEW_MS;
  return unit === 'ms' ? cutoffMs : Math.floor(cutoffMs / 1000);
}
