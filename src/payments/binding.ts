import { createHmac, randomBytes, timingSafeEqual, type KeyObject } from 'node:crypto';
import type { Address, Hex } from 'viem';
import { keccak256Hex } from '../lib/keccak.ts';

/**
 * Nonce binding (spec 5): the EIP-3009 nonce must equal
 * keccak256(abi.encodePacked(payer, citySlug, uint256 count, bytes32 salt)), so a signed
 * authorization cannot be re-pointed at another city or count.
 *
 * The salt is HMAC(server secret, city | count | window) over short time windows. Clients cannot
 * compute it, and because it changes every window a payer can buy the same bundle again later
 * with a fresh on-chain nonce. (A salt fixed forever per city and count would make the second
 * identical purchase reuse a nonce the token contract has already burned.)
 *
 * Per-challenge salts (issue 12): every 402 serves a fresh salt, 16 random bytes followed by a
 * 16-byte HMAC tag over them, and the client echoes it back as `payload.salt`. The server checks
 * the tag (it issued this salt) and then the nonce, so the same wallet can buy the same bundle
 * twice in one second, each purchase its own on-chain nonce. Window salts still bind a nonce
 * when no salt is echoed, so clients that do not echo keep working.
 */
export const BINDING_FORMULA = 'keccak256(abi.encodePacked(payer, citySlug, uint256 count, bytes32 salt))';
export const BINDING_WINDOW_S = 60;
/**
 * Longest accepted authorization lifetime, measured from the moment the challenge was served to
 * `validBefore`. It bounds which salt windows a still-valid authorization can come from.
 */
export const MAX_AUTH_LIFETIME_S = 900;

/**
 * The server secret: raw bytes, or (on the paid path) a KeyObject made once with
 * `createSecretKey`, so no HMAC copies the key again.
 */
export type BindingSecret = Buffer | KeyObject;

export function windowAt(unixSeconds: number): number {
  return Math.floor(unixSeconds / BINDING_WINDOW_S);
}

export function bindingSalt(secret: BindingSecret, city: string, count: number, window: number): Hex {
  return `0x${createHmac('sha256', secret).update(`isocast-binding|${city}|${count}|${window}`).digest('hex')}`;
}

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const BYTES32 = /^0x[0-9a-fA-F]{64}$/;

/**
 * abi.encodePacked(address, string, uint256, bytes32) is plain concatenation: 20 address bytes,
 * the UTF-8 slug, the count as a 32-byte big-endian word, the 32 salt bytes. Written out rather
 * than through viem's `encodePacked` (a hex string round trip per field) because the paid path
 * computes it on every purchase, and once per salt window for a client that echoes no salt.
 * Throws on what viem would refuse to pack: a malformed address or salt, a count outside uint.
 */
export function bindingNonce(payer: Address, city: string, count: number, salt: Hex): Hex {
  if (!ADDRESS.test(payer)) throw new TypeError(`not an address: ${payer}`);
  if (!BYTES32.test(salt)) throw new TypeError('salt must be 32 bytes');
  if (!Number.isSafeInteger(count) || count < 0) throw new RangeError(`not a uint256 count: ${count}`);
  const cityBytes = Buffer.from(city, 'utf8');
  const packed = Buffer.alloc(20 + cityBytes.length + 64);
  packed.write(payer.slice(2), 0, 'hex');
  cityBytes.copy(packed, 20);
  const countAt = 20 + cityBytes.length;
  // A safe integer fits the word's last 8 bytes (the rest stays zero).
  packed.writeBigUInt64BE(BigInt(count), countAt + 24);
  packed.write(salt.slice(2), countAt + 32, 'hex');
  return keccak256Hex(packed);
}

/**
 * Windows a still-valid authorization can have taken its salt from: the challenge was served at
 * some t <= now, and the authorization lives at most MAX_AUTH_LIFETIME_S from t, so
 * t >= validBefore - MAX_AUTH_LIFETIME_S. Every window touching [validBefore - max, now].
 */
export function acceptedWindows(nowSeconds: number, validBefore: number): number[] {
  const first = windowAt(Math.max(0, validBefore - MAX_AUTH_LIFETIME_S));
  const last = windowAt(nowSeconds);
  const out: number[] = [];
  for (let w = last; w >= first; w--) out.push(w);
  return out;
}

/** The window whose salt the nonce binds to (payer, city, count), or null when none does. */
export function matchBinding(
  secret: BindingSecret,
  p: { payer: Address; city: string; count: number; nonce: Hex; nowSeconds: number; validBefore: number },
): number | null {
  const nonce = p.nonce.toLowerCase();
  for (const w of acceptedWindows(p.nowSeconds, p.validBefore)) {
    if (bindingNonce(p.payer, p.city, p.count, bindingSalt(secret, p.city, p.count, w)) === nonce) return w;
  }
  return null;
}

/** Where the client returns the challenge salt in its PaymentPayload (x402 `exact` payload). */
export const SALT_ECHO = 'payload.salt';

function saltTag(secret: BindingSecret, city: string, count: number, randomHex: string): Buffer {
  return createHmac('sha256', secret).update(`isocast-binding|${city}|${count}|${randomHex}`).digest().subarray(0, 16);
}

/** A fresh challenge salt: 0x + 16 random bytes + the first 16 bytes of their HMAC tag. */
export function challengeSalt(
  secret: BindingSecret,
  city: string,
  count: number,
  random: Buffer = randomBytes(16),
): Hex {
  const randomHex = random.toString('hex');
  return `0x${randomHex}${saltTag(secret, city, count, randomHex).toString('hex')}`;
}

/** True when `salt` is a challenge salt this server issued for (city, count). No clock involved. */
export function isIssuedSalt(secret: BindingSecret, city: string, count: number, salt: string): boolean {
  if (!/^0x[0-9a-fA-F]{64}$/.test(salt)) return false;
  const randomHex = salt.slice(2, 34).toLowerCase();
  return timingSafeEqual(saltTag(secret, city, count, randomHex), Buffer.from(salt.slice(34), 'hex'));
}
