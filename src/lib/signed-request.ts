import { signatureVerificationFailed, staleTimestamp } from './api-errors.ts';

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
