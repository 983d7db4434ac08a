import type { Address } from 'viem';
import {
  type Authorization,
  BASE_ALIASES,
  BASE_CAIP2,
  BASE_CHAIN_ID,
  TRANSFER_WITH_AUTHORIZATION_TYPES,
  USDC_NAME,
  USDC_VERSION,
} from '../../packages/isocast-client/src/chain.ts';

/**
 * The EIP-3009 `TransferWithAuthorization` typed data USDC uses. The domain is USDC's own
 * (`USD Coin`, version `2`) on Base; the verifying contract is the configured USDC address, so a
 * test token deployed elsewhere verifies under its own address. The definitions are the buyer
 * package's (packages/isocast-client/src/chain.ts): what a buyer signs is what this verifies.
 */
export const CHAIN_ID = BASE_CHAIN_ID;
export const NETWORK = BASE_CAIP2;
/** x402 v1 tooling names Base `base`; both spellings mean chain 8453 (networks.ts maps them). */
export const NETWORK_ALIASES = BASE_ALIASES;
export {
  type Authorization,
  TRANSFER_WITH_AUTHORIZATION_TYPES,
  USDC_NAME,
  USDC_VERSION,
} from '../../packages/isocast-client/src/chain.ts';

export function usdcDomain(usdcAddress: Address, name = USDC_NAME, version = USDC_VERSION) {
  return { name, version, chainId: CHAIN_ID, verifyingContract: usdcAddress } as const;
}

export function authorizationTypedData(usdcAddress: Address, auth: Authorization) {
  return {
    domain: usdcDomain(usdcAddress),
    types: TRANSFER_WITH_AUTHORIZATION_TYPES,
    primaryType: 'TransferWithAuthorization' as const,
    message: auth,
  };
}
