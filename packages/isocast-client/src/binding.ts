import { encodePacked, keccak256, type Address, type Hex } from 'viem';

/**
 * Nonce binding (spec 5): an isocast payment's EIP-3009 nonce is not random. It is
 * keccak256(abi.encodePacked(payer, citySlug, uint256 count, bytes32 salt)) with the salt the 402
 * served in `extra.binding.salt`, so a signed authorization cannot be re-pointed at another city
 * or count. Stock x402 EVM clients draw a random nonce, which isocast refuses; this is why the
 * package exists.
 */
export const BINDING_FORMULA = 'keccak256(abi.encodePacked(payer, citySlug, uint256 count, bytes32 salt))';

/** Longest authorization lifetime the server accepts, from the challenge to `validBefore`. */
export const MAX_AUTH_LIFETIME_S = 900;

/** Where an x402 v1 payment returns the challenge salt when the binding asks (`saltEcho`). */
export const SALT_ECHO = 'payload.salt';

/** What a nonce binds: the paying wallet, the city slug, the bundle's count and the challenge's salt. */
export type BindingNonceInput = { payer: Address; city: string; count: number; salt: Hex };

export function bindingNonce({ payer, city, count, salt }: BindingNonceInput): Hex {
  if (!Number.isSafeInteger(count) || count < 0) throw new RangeError(`not a uint256 count: ${count}`);
  // Lower case: the packed bytes are the same, and viem's checksum check has nothing to refuse.
  const packed = encodePacked(
    ['address', 'string', 'uint256', 'bytes32'],
    [payer.toLowerCase() as Address, city, BigInt(count), salt],
  );
  return keccak256(packed);
}
