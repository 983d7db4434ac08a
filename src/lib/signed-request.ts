/**
 * The clock rule every signed request shares (spec 8): a signed instant may be at most
 * SIGNED_REQUEST_SKEW_SEC from server time, either way, and is refused with `stale timestamp`
 * otherwise. Chat registrations, receipt requests and revocations, and wallet sign-ins
 * (sign-in-with-x) all use it, so a buyer's clock that one of them accepts, every one accepts.
 */
export const SIGNED_REQUEST_SKEW_SEC = 600;

/** True when `timestampSec` (unix seconds) is outside the skew window around `nowMs`. */
export function isStaleTimestamp(nowMs: number, timestampSec: number): boolean {
  return Math.abs(Math.floor(nowMs / 1000) - timestampSec) > SIGNED_REQUEST_SKEW_SEC;
}
