import { isAddress, recoverTypedDataAddress, type Address, type Hex } from 'viem';
import { keccak256Bytes } from '../lib/keccak.ts';
import { recoverPublicKey, secp256k1LoadError } from '../lib/secp256k1.ts';
import { createLogger } from '../lib/logger.ts';
import { once } from '../lib/once.ts';
import { authorizationTypedData } from '../x402/eip3009.ts';
import { type Authorization, BASE_CHAIN_ID, USDC_NAME, USDC_VERSION } from '../x402/networks.ts';

/**
 * viem's `recoverTypedDataAddress` (null where it throws) from a hand-built digest and libsecp256k1 (native or
 * WASM); without either engine, viem does the whole job (logged once).
 */
const utf8 = (s: string) => Buffer.from(s, 'utf8');
/** Hex (0x optional) to bytes; callers have checked the format. */
const bytesOf = (hex: string) => Buffer.from(hex.startsWith('0x') ? hex.slice(2) : hex, 'hex');
// On the first digest, not at load: the first keccak builds its permutation (docs/performance.md, start-up).
const typeHash = once(() => ({
  transfer: keccak256Bytes(
    utf8(
      'TransferWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)',
    ),
  ),
  domain: keccak256Bytes(utf8('EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)')),
}));
const UINT256_LIMIT = 1n << 256n;

const domainSeparators = new Map<string, Uint8Array>();

function word(out: Uint8Array, index: number, value: bigint): void {
  // 0 <= value < 2^256 (checked by the caller): at most 64 hex digits.
  out.set(Buffer.from(value.toString(16).padStart(64, '0'), 'hex'), index * 32);
}

function addressWord(out: Uint8Array, index: number, address: string): void {
  out.set(bytesOf(address), index * 32 + 12);
}

function domainSeparator(usdc: Address): Uint8Array {
  let d = domainSeparators.get(usdc);
  if (!d) {
    const enc = new Uint8Array(5 * 32);
    enc.set(typeHash().domain, 0);
    enc.set(keccak256Bytes(utf8(USDC_NAME)), 32);
    enc.set(keccak256Bytes(utf8(USDC_VERSION)), 64);
    word(enc, 3, BigInt(BASE_CHAIN_ID));
    addressWord(enc, 4, usdc);
    d = keccak256Bytes(enc);
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
  enc.set(typeHash().transfer, 0);
  addressWord(enc, 1, a.from);
  addressWord(enc, 2, a.to);
  word(enc, 3, a.value);
  word(enc, 4, a.validAfter);
  word(enc, 5, a.validBefore);
  enc.set(bytesOf(a.nonce), 6 * 32);
  // One buffer, hashes kept as bytes: no hex round trips on the paid path.
  const msg = new Uint8Array(66);
  msg[0] = 0x19;
  msg[1] = 0x01;
  msg.set(domainSeparator(usdc), 2);
  msg.set(keccak256Bytes(enc), 34);
  return keccak256Bytes(msg);
}

let warned = false;

/** The lowercase signer of `a` under the token's domain, or null for a bad signature or input. */
export async function recoverAuthorizationSigner(
  usdc: Address,
  a: Authorization,
  signature: Hex,
): Promise<Address | null> {
  const digest = authorizationDigest(usdc, a);
  if (!digest) return null;
  if (!/^0x[0-9a-fA-F]{130}$/.test(signature)) return null;
  // On the event loop: a worker thread cost about as much CPU as the recovery (docs/performance.md).
  const publicKey = recoverPublicKey(digest, bytesOf(signature));
  if (publicKey !== undefined)
    return publicKey && (`0x${Buffer.from(keccak256Bytes(publicKey).buffer, 12).toString('hex')}` as Address);
  if (!warned) {
    warned = true;
    createLogger({ level: 'warn', base: { service: 'isocast' } }).warn(
      'libsecp256k1 unavailable (native and WASM); recovering signatures with viem (slower)',
      { reason: secp256k1LoadError() },
    );
  }
  try {
    return (await recoverTypedDataAddress({ ...authorizationTypedData(usdc, a), signature })).toLowerCase() as Address;
  } catch {
    return null;
  }
}
