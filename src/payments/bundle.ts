import { ApiError } from '../lib/errors.ts';
import { microToUsd } from '../lib/money.ts';
import { bundlePrice, MAX_COUNT, MIN_COUNT, MIN_SPEND_MICRO } from '../pricing/tiers.ts';
import { PAYMENT_ERRORS } from './errors.ts';

/**
 * Validation of a requested bundle, run before any payment work: an integer count of at least 2
 * and at most MAX_COUNT (10000, one authorization's worth at the Whale price is 35 USDC), and a
 * total of at least the minimum spend. Errors carry `minSpendUsd` (spec 4.3).
 */
const minSpend = () => ({ minSpendUsd: microToUsd(MIN_SPEND_MICRO) });

export function parseCount(raw: string | undefined, fallback?: number): number {
  if ((raw === undefined || raw === '') && fallback !== undefined) return fallback;
  // Any numeric spelling above the maximum (1e30, 21 digits, Infinity) gets the maximum's message.
  const value = raw === undefined || raw.trim() === '' ? Number.NaN : Number(raw);
  if (value > MAX_COUNT) throw new ApiError(400, `count must be at most ${MAX_COUNT}`, minSpend());
  if (raw === undefined || !/^\d{1,9}$/.test(raw) || value < MIN_COUNT)
    throw new ApiError(400, PAYMENT_ERRORS.count, minSpend());
  const count = value;
  if (bundlePrice(count).totalMicro < MIN_SPEND_MICRO) throw new ApiError(400, PAYMENT_ERRORS.minSpend, minSpend());
  return count;
}

/** `since`: an integer of at least 0, default 0. */
export function parseSince(raw: string | undefined): number {
  if (raw === undefined || raw === '') return 0;
  if (!/^\d{1,15}$/.test(raw)) throw new ApiError(400, 'since must be an integer of at least 0');
  return Number(raw);
}

export function requireCity(raw: string | undefined, isCity: (slug: string) => boolean): string {
  if (raw === undefined || raw === '') throw new ApiError(400, 'city is required');
  if (!isCity(raw)) throw new ApiError(404, 'unknown city');
  return raw;
}

/** The longest a read may be held (`wait`, issue 25.4): under every proxy's usual 30 s+ timeout. */
export const MAX_WAIT_S = 25;

/** `wait`: whole seconds from 0 to MAX_WAIT_S; absent (null) keeps the read immediate. */
export function parseWait(raw: string | undefined): number | null {
  if (raw === undefined) return null;
  if (!/^\d{1,2}$/.test(raw) || Number(raw) > MAX_WAIT_S)
    throw new ApiError(400, `wait must be an integer from 0 to ${MAX_WAIT_S} (seconds)`);
  return Number(raw);
}
