import type { Address, Hex } from 'viem';
import { BASE_ALIASES, BASE_CAIP2, BASE_CHAIN_ID } from './networks.ts';

/**
 * The EIP-3009 `TransferWithAuthorization` typed data USDC uses. The domain is USDC's own
 * (`USD Coin`, version `2`) on Base; the verifying contract is the configured USDC address, so a
 * test token deployed elsewhere verifies under its own address.
 */
export const CHAIN_ID = BASE_CHAIN_ID;
export const NETWORK = BASE_CAIP2;
/** x402 v1 tooling names Base `base`; both spellings mean chain 8453 (networks.ts maps them). */
export const NETWORK_ALIASES = BASE_ALIASES;
export const USDC_NAME = 'USD Coin';
export const USDC_VERSION = '2';

export const TRANSFER_WITH_AUTHORIZATION_TYPES = {
  TransferWithAuthorization: [
    { name: 'from', type: 'address' },
    { name: 'to', type: 'address' },
    { name: 'value', type: 'uint256' },
    { name: 'validAfter', type: 'uint256' },
    { name: 'validBefore', type: 'uint256' },
    { name: 'nonce', type: 'bytes32' },
  ],
} as const;

export type Authorization = {
  from: Address;
  to: Address;
  value: bigint;
  validAfter: bigint;
  validBefore: bigint;
  nonce: Hex;
};

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
