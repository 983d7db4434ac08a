import type { Micro } from '../lib/money.ts';

/**
 * Bundle pricing (spec 2.6), all in integer micro-USDC. A count's unit price is the tier with the
 * largest minCount not above it; the total is count x unit price, exact in integers.
 */
export type Tier = { name: string; minCount: number; unitMicro: Micro };

export const TIERS: readonly Tier[] = [
  { name: 'Min', minCount: 2, unitMicro: 5_000 },
  { name: 'Starter', minCount: 20, unitMicro: 5_000 },
  { name: 'Standard', minCount: 100, unitMicro: 4_500 },
  { name: 'Pro', minCount: 500, unitMicro: 4_000 },
  { name: 'Whale', minCount: 2000, unitMicro: 3_500 },
];

export const BASE_UNIT_MICRO: Micro = 5_000;
export const MIN_SPEND_MICRO: Micro = 10_000;
export const MIN_COUNT = 2;
/** Largest bundle one authorization may buy (35 USDC at the Whale price): bounds a typo'd count. */
export const MAX_COUNT = 10_000;

export function tierFor(count: number): Tier {
  if (!Number.isSafeInteger(count) || count < MIN_COUNT)
    throw new RangeError(`count must be an integer of at least ${MIN_COUNT}`);
  let chosen = TIERS[0]!;
  for (const t of TIERS) if (t.minCount <= count) chosen = t;
  return chosen;
}

export function bundlePrice(count: number): { tier: Tier; unitMicro: Micro; totalMicro: Micro } {
  const tier = tierFor(count);
  return { tier, unitMicro: tier.unitMicro, totalMicro: tier.unitMicro * count };
}
