/** Base is `eip155:8453` (x402 v2) or `base` (v1 tooling), either accepted; the buyer package's names, re-exported. */
import { BASE_CAIP2 } from '../../packages/isocast-client/src/chain.ts';

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
