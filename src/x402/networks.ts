/**
 * Base is `eip155:8453` (spec, x402 v2) or legacy `base` (x402 v1 tooling); a buyer may send either.
 * The names live in the buyer package (chain.ts); this is their one re-export.
 */
import { BASE_ALIASES, BASE_CAIP2 } from '../../packages/isocast-client/src/chain.ts';

export {
  authorizationJson,
  BASE_ALIASES,
  BASE_CAIP2,
  BASE_CHAIN_ID,
  BASE_V1_NAME,
  TRANSFER_WITH_AUTHORIZATION_TYPES,
  USDC_NAME,
  USDC_VERSION,
  type Authorization,
} from '../../packages/isocast-client/src/chain.ts';

/** The network our challenges, documents and settle responses name. */
export const NETWORK = BASE_CAIP2;
/** Both spellings of Base a payment may carry. */
export const NETWORK_ALIASES = BASE_ALIASES;
