import { microToUsd } from '../lib/money.ts';
import { bundlePrice, MAX_COUNT, MIN_COUNT } from '../../packages/isocast-client/src/pricing.ts';
import { MIN_SPEND_MICRO } from '../pricing/tiers.ts';
import {
  cityRequired,
  countTooLarge,
  invalidCount,
  invalidSince,
  invalidWait,
  minSpend as belowMinSpend,
  unknownCity,
} from '../lib/api-errors.ts';

/** Errors about a bundle carry `minSpendUsd` (spec 4.3). */
const MIN_SPEND_USD = microToUsd(MIN_SPEND_MICRO);

/** Before any payment work: a count from 2 to MAX_COUNT (35 USDC at the Whale price) reaching the minimum spend. */
export function parseCount(raw: string | undefined, fallback?: number): number {
  if ((raw === undefined || raw === '') && fallback !== undefined) return fallback;
  // Any numeric spelling above the maximum (1e30, 21 digits, Infinity) gets the maximum's message.
  const value = raw === undefined || raw.trim() === '' ? Number.NaN : Number(raw);
  if (value > MAX_COUNT) throw countTooLarge(MAX_COUNT, MIN_SPEND_USD);
  if (raw === undefined || !/^\d{1,9}$/.test(raw) || value < MIN_COUNT) throw invalidCount(MIN_SPEND_USD);
  if (bundlePrice(value).totalMicro < MIN_SPEND_MICRO) throw belowMinSpend(MIN_SPEND_USD);
  return value;
}

export function parseSince(raw: string | undefined): number {
  if (raw === undefined || raw === '') return 0;
  if (!/^\d{1,15}$/.test(raw)) throw invalidSince();
  return Number(raw);
}

export function requireCity(raw: string | undefined, isCity: (slug: string) => boolean): string {
  if (raw === undefined || raw === '') throw cityRequired();
  if (!isCity(raw)) throw unknownCity();
  return raw;
}

/** The longest a read may be held (`wait`): under every proxy's usual 30 s+ timeout. */
export const MAX_WAIT_S = 25;

/** `wait`: whole seconds from 0 to MAX_WAIT_S; absent (null) keeps the read immediate. */
export function parseWait(raw: string | undefined): number | null {
  if (raw === undefined) return null;
  if (!/^\d{1,2}$/.test(raw) || Number(raw) > MAX_WAIT_S) throw invalidWait(MAX_WAIT_S);
  return Number(raw);
}
