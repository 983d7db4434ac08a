import { hexToBytes, isAddress, keccak256, recoverTypedDataAddress, stringToBytes, type Address, type Hex } from 'viem';
import { recoverPublicKeyWasm, secp256k1LoadError } from '../lib/secp256k1.ts';
import { createLogger } from '../lib/logger.ts';
import { authorizationTypedData, CHAIN_ID, USDC_NAME, USDC_VERSION, type Authorization } from './eip3009.ts';

/**
 * Who signed an EIP-3009 `TransferWithAuthorization`: the EIP-712 digest built by hand from
 * hashes computed once (the domain separator per token address, the type hash), then recovered
 * with libsecp256k1 in WASM (src/lib/secp256k1.ts). The result equals viem's
 * `recoverTypedDataAddress` for every input, including the ones viem refuses (an address with a
 * wrong EIP-55 checksum, a value outside uint256): those yield null here where viem throws.
 * When the WASM cannot load, viem does the whole job, and that is logged once.
 */
const TYPE_HASH = hexToBytes(
  keccak256(
    stringToBytes(
      'TransferWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)',
    ),
  ),
);
const DOMAIN_TYPE_HASH = hexToBytes(
  keccak256(stringToBytes('EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)')),
);
const UINT256_LIMIT = 1n << 256n;

const domainSeparators = new Map<string, Uint8Array>();

function word(out: Uint8Array, index: number, value: bigint): void {
  let v = value;
  for (let i = index * 32 + 31; i >= index * 32; i--) {
    out[i] = Number(v & 0xffn);
    v >>= 8n;
  }
}

function addressWord(out: Uint8Array, index: number, address: string): void {
  out.set(hexToBytes(address as Hex), index * 32 + 12);
}

function domainSeparator(usdc: Address): Uint8Array {
  let d = domainSeparators.get(usdc);
  if (!d) {
    const enc = new Uint8Array(5 * 32);
    enc.set(DOMAIN_TYPE_HASH, 0);
    enc.set(hexToBytes(keccak256(stringToBytes(USDC_NAME))), 32);
    enc.set(hexToBytes(keccak256(stringToBytes(USDC_VERSION))), 64);
    word(enc, 3, BigInt(CHAIN_ID));
    addressWord(enc, 4, usdc);
    d = hexToBytes(keccak256(enc));
    // Configured token addresses only (one in production): the map stays tiny.
    if (domainSeparators.size < 16) domainSeparators.set(usdc, d);
  }
  return d;
}

/** The EIP-712 digest USDC's `transferWithAuthorization` checks; null for what viem would refuse. */
export function authorizationDigest(usdc: Address, a: Authorization): Uint8Array | null {
  if (!isAddress(usdc) || !isAddress(a.from) || !isAddress(a.to)) return null;
  for (const v of [a.value, a.validAfter, a.validBefore]) if (v < 0n || v >= UINT256_LIMIT) return null;
  if (!/^0x[0-9a-fA-F]{64}$/.test(a.nonce)) return null;
  const enc = new Uint8Array(7 * 32);
  enc.set(TYPE_HASH, 0);
  addressWord(enc, 1, a.from);
  addressWord(enc, 2, a.to);
  word(enc, 3, a.value);
  word(enc, 4, a.validAfter);
  word(enc, 5, a.validBefore);
  enc.set(hexToBytes(a.nonce), 6 * 32);
  // One buffer, hashes kept as bytes: no hex round trips on the paid path.
  const msg = new Uint8Array(66);
  msg[0] = 0x19;
  msg[1] = 0x01;
  msg.set(domainSeparator(usdc), 2);
  msg.set(keccak256(enc, 'bytes'), 34);
  return keccak256(msg, 'bytes');
}

let warned = false;

/**
 * The lowercase address that signed `a` under the token `usdc`'s domain, or null when the
 * signature recovers to nothing or the input is malformed.
 */
export async function recoverAuthorizationSigner(
  usdc: Address,
  a: Authorization,
  signature: Hex,
): Promise<Address | null> {
  const digest = authorizationDigest(usdc, a);
  if (!digest) return null;
  if (!/^0x[0-9a-fA-F]{130}$/.test(signature)) return null;
  const publicKey = recoverPublicKeyWasm(digest, hexToBytes(signature));
  // The address is the last 20 bytes of the key's keccak-256.
  if (publicKey !== undefined) return publicKey && (`0x${keccak256(publicKey).slice(26)}` as Address);
  if (!warned) {
    warned = true;
    createLogger({ level: 'warn', base: { service: 'isocast' } }).warn(
      'WASM secp256k1 unavailable; recovering signatures with viem (slower)',
      { reason: secp256k1LoadError() },
    );
  }
  try {
    return (await recoverTypedDataAddress({ ...authorizationTypedData(usdc, a), signature })).toLowerCase() as Address;
  } catch {
    return null;
  }
}
