import type { Address } from 'viem';
import {
  type Authorization,
  BASE_CHAIN_ID,
  TRANSFER_WITH_AUTHORIZATION_TYPES,
  USDC_NAME,
  USDC_VERSION,
} from './networks.ts';

/**
 * USDC's EIP-3009 typed data with the configured token as verifying contract (a test token
 * verifies under its own address); the buyer package's definitions, so what it signs verifies.
 */
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
