/**
 * Network names, in one place. The spec, x402 v2 and our 402 challenge name Base by its CAIP-2 id
 * `eip155:8453`; x402 v1 tooling (the legacy `x402` package, v1 facilitators, `x402-fetch` 1.x)
 * knows only its legacy name `base`. A buyer may send either; a facilitator is sent the one it
 * lists in `/supported` (settlers/negotiate.ts). The names live in the buyer package (chain.ts),
 * whose checks read them too; this is their one re-export.
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
