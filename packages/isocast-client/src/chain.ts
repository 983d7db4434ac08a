import type { Address, Hex } from 'viem';

/**
 * What an isocast payment is, on chain: USDC on Base mainnet, moved by an EIP-3009
 * `TransferWithAuthorization` signed under USDC's own EIP-712 domain (`USD Coin`, version `2`).
 * The isocast server imports these same constants, so buyer and seller cannot disagree on them.
 *
 * The spec, x402 v2 and isocast's challenges name Base by its CAIP-2 id `eip155:8453`; x402 v1
 * tooling knows only the legacy name `base`. Both mean chain 8453.
 */
export const BASE_CHAIN_ID = 8453;
export const BASE_CAIP2 = 'eip155:8453';
export const BASE_V1_NAME = 'base';
/** Both spellings of Base a payment may carry. */
export const BASE_ALIASES: readonly string[] = [BASE_CAIP2, BASE_V1_NAME];

/** Circle's USDC on Base mainnet. */
export const BASE_USDC = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';
export const USDC_NAME = 'USD Coin';
export const USDC_VERSION = '2';
export const USDC_DECIMALS = 6;

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

/** An EIP-3009 authorization; amounts are atomic USDC (6 decimals). */
export type Authorization = {
  from: Address;
  to: Address;
  value: bigint;
  validAfter: bigint;
  validBefore: bigint;
  nonce: Hex;
};

/** An authorization as x402 payloads carry it: amounts and times as decimal strings. */
export type AuthorizationJson = {
  from: Address;
  to: Address;
  value: string;
  validAfter: string;
  validBefore: string;
  nonce: Hex;
};

/** The one JSON form of an authorization, for the buyer's payload and the server's facilitator call alike. */
export function authorizationJson(a: Authorization): AuthorizationJson {
  return {
    from: a.from,
    to: a.to,
    value: a.value.toString(),
    validAfter: a.validAfter.toString(),
    validBefore: a.validBefore.toString(),
    nonce: a.nonce,
  };
}
