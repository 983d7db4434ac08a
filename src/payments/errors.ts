import { ApiError } from '../lib/errors.ts';

/** The payment plane's exact error strings (spec 7). */
export const PAYMENT_ERRORS = {
  verify: 'payment verification failed — you were not charged',
  binding: 'payment binding mismatch: nonce must bind (payer, city, count)',
  settle: 'settlement failed — you were not charged',
  sanctioned: 'wallet is sanctioned; payment refused',
  screening: 'sanctions screening unavailable',
  entitlement: 'entitlement update failed after payment',
  count: 'count must be an integer of at least 2',
  minSpend: 'minimum spend is 0.01 USDC',
  pending: 'settlement pending — retry the same X-Payment; you will not be charged twice',
} as const;

export const verifyFailed = (reason: string) => new ApiError(402, PAYMENT_ERRORS.verify, { reason });
export const bindingMismatch = () => new ApiError(402, PAYMENT_ERRORS.binding);
export const settleFailed = (reason: string) => new ApiError(402, PAYMENT_ERRORS.settle, { reason });
export const sanctioned = () => new ApiError(403, PAYMENT_ERRORS.sanctioned);
export const screeningUnavailable = () => new ApiError(503, PAYMENT_ERRORS.screening);
export const refundQueued = () => new ApiError(502, PAYMENT_ERRORS.entitlement, { refund: 'queued' });
/** Outcome unknown (in doubt): the buyer retries the same header; the chain decides. */
export const settlementPending = (retryAfterSeconds: number) =>
  new ApiError(503, PAYMENT_ERRORS.pending, { retryAfterSeconds }, { 'retry-after': String(retryAfterSeconds) });
