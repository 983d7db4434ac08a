import type { Address } from 'viem';
import {
  type Authorization,
  BASE_CHAIN_ID,
  TRANSFER_WITH_AUTHORIZATION_TYPES,
  USDC_NAME,
  USDC_VERSION,
} from './networks.ts';

/** The buyer package's EIP-3009 typed data (what it signs verifies), under the configured token's address. */
export function usdcDomain(usdcAddress: Address) {
  return { name: USDC_NAME, version: USDC_VERSION, chainId: BASE_CHAIN_ID, verifyingContract: usdcAddress } as const;
}

export function authorizationTypedData(usdcAddress: Address, auth: Authorization) {
  return {
    domain: usdcDomain(usdcAddress),
    types: TRANSFER_WITH_AUTHORIZATION_TYPES,
    primaryType: 'TransferWithAuthorization' as const,
    message: auth,
  };
}
