import type { Address } from 'viem';
import {
  type Authorization,
  BASE_CHAIN_ID,
  TRANSFER_WITH_AUTHORIZATION_TYPES,
  USDC_NAME,
  USDC_VERSION,
} from './networks.ts';

/**
 * The EIP-3009 `TransferWithAuthorization` typed data USDC uses: USDC's own domain on Base, with
 * the configured USDC address as verifying contract, so a test token deployed elsewhere verifies
 * under its own address. The definitions are the buyer package's: what a buyer signs is what this
 * verifies.
 */
export const CHAIN_ID = BASE_CHAIN_ID;

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
