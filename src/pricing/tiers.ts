import { type Micro, microToUsd } from '../lib/money.ts';
import { TIERS } from '../../packages/isocast-client/src/pricing.ts';

/** Spec 2.6, micro-USDC; the tiers are the buyer package's table (imported from there), which every buyer checks a 402 against. */
export const BASE_UNIT_MICRO: Micro = 5_000;
export const MIN_SPEND_MICRO: Micro = 10_000;

/** The tier table as GET /v1/signals/meta publishes it (USD numbers). */
export function tiersPublic() {
  return TIERS.map((t) => ({
    name: t.name,
    minCount: t.minCount,
    unitPriceUsd: microToUsd(t.unitMicro),
    totalUsd: microToUsd(t.unitMicro * t.minCount),
  }));
}
