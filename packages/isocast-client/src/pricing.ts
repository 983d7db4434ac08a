/**
 * isocast's bundle prices (spec 2.6), in integer micro-USDC (one micro-USDC is one atomic USDC
 * unit). A count's unit price is the tier with the largest minCount not above it; the total is
 * count x unit price. The server charges from this table and the buyer checks every 402 against
 * it, so a server asking for more than this table says is refused before anything is signed.
 */
export type Tier = { name: string; minCount: number; unitMicro: number };

export const TIERS: readonly Tier[] = [
  { name: 'Min', minCount: 2, unitMicro: 5_000 },
  { name: 'Starter', minCount: 20, unitMicro: 5_000 },
  { name: 'Standard', minCount: 100, unitMicro: 4_500 },
  { name: 'Pro', minCount: 500, unitMicro: 4_000 },
  { name: 'Whale', minCount: 2000, unitMicro: 3_500 },
];

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

export function bundlePrice(count: number): { tier: Tier; unitMicro: number; totalMicro: number } {
  const tier = tierFor(count);
  return { tier, unitMicro: tier.unitMicro, totalMicro: tier.unitMicro * count };
}
