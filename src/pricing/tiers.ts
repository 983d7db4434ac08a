import type { Micro } from '../lib/money.ts';

/**
 * Bundle pricing (spec 2.6), in integer micro-USDC. The table and its arithmetic are the buyer
 * package's: every buyer checks a 402's amount against that same table before signing.
 */
export {
  bundlePrice,
  MAX_COUNT,
  MIN_COUNT,
  TIERS,
} from '../../packages/isocast-client/src/pricing.ts';

export const BASE_UNIT_MICRO: Micro = 5_000;
export const MIN_SPEND_MICRO: Micro = 10_000;
