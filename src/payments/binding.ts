import { createHmac, type KeyObject } from 'node:crypto';
import type { Address, Hex } from 'viem';
import { boundedMap, type BoundedMap } from '../lib/bounded-map.ts';
import { keccak256Hex } from '../lib/keccak.ts';
import { MAX_AUTH_LIFETIME_S, type BindingNonceInput } from '../../packages/isocast-client/src/binding.ts';

/**
 * Nonce binding (spec 5): the EIP-3009 nonce must equal
 * keccak256(abi.encodePacked(payer, citySlug, uint256 count, bytes32 salt)) with the salt a 402
 * served, so a signed authorization cannot be re-pointed at another city or count.
 *
 * The salt is HMAC(server secret, city | count | k | minute). `k` is the bundle's
 * purchase step: it moves when a purchase bound to the current k settles (the salt_steps trigger,
 * schema.sql), so after any wallet's purchase the next 402 serves a salt that wallet has not
 * used, and buying the same bundle again right away gets a fresh nonce and a second ceiling step.
 * The minute moves it too, so a payment refused for good (not charged) does not pin its nonce
 * for longer than a minute on a bundle nobody else buys.
 *
 * Nothing per challenge is stored or echoed: the server recomputes the salts it can have served
 * from (city, count), its own step history and the clock, so a client that knows only the spec
 * (bind to `extra.binding.salt`, send a plain x402 payload) pays. k is per bundle, not per
 * payer, because a 402 is served before anyone says who will pay. Concurrent buyers of the same
 * bundle all bind to the same k; the first to settle moves it and the others still match the k
 * they were served (below). Work per payment is bounded: at most SALT_STEPS_CHECKED steps of k
 * times the minutes they cover, and every step of k is a settled, paid purchase.
 */
export const SALT_EPOCH_S = 60;
/**
 * The formula, the longest accepted authorization lifetime (from the moment the challenge was
 * served to `validBefore`; it bounds which served salts a still-valid authorization can carry) and
 * the salt echo's place are the buyer package's, whose signer caps its lifetime at the same value.
 */
export {
  BINDING_FORMULA,
  MAX_AUTH_LIFETIME_S,
  SALT_ECHO,
} from '../../packages/isocast-client/src/binding.ts';
/** Steps of a bundle's k tried for one payment, newest first; salt_steps keeps as many per bundle. */
export const SALT_STEPS_CHECKED = 64;

/**
 * The server secret: raw bytes, or (on the paid path) a KeyObject made once with
 * `createSecretKey`, so no HMAC copies the key again.
 */
type BindingSecret = Buffer | KeyObject;

/** k became the bundle's served step at `sinceMs` (server clock). */
export type SaltStep = { k: number; sinceMs: number };
/** What a served salt was derived from. */
type SaltPoint = { k: number; epoch: number };

/** The step of a bundle nobody has bought yet. */
export const FIRST_STEP: SaltStep = { k: 0, sinceMs: 0 };

export function epochAt(ms: number): number {
  return Math.floor(ms / (SALT_EPOCH_S * 1000));
}

/** The bundle a salt and a nonce are bound to. */
type SaltBundle = { city: string; count: number };

/** Salts already derived, per secret: a purchase checks every point its authorization may echo. */
const derived = new WeakMap<BindingSecret, BoundedMap<Hex>>();
/** Bundles x steps x minutes in use at once are far fewer. */
const MAX_DERIVED = 4_096;

export function servedSalt(secret: BindingSecret, bundle: SaltBundle, point: SaltPoint): Hex {
  const input = `isocast-binding|${bundle.city}|${bundle.count}|${point.k}|${point.epoch}`;
  let memo = derived.get(secret);
  if (!memo) {
    memo = boundedMap(MAX_DERIVED);
    derived.set(secret, memo);
  }
  return memo.memo(input, () => `0x${createHmac('sha256', secret).update(input).digest('hex')}`);
}

/** The salt a 402 serves now: the bundle's current `step`, this minute. */
export function currentSalt(secret: BindingSecret, c: SaltBundle & { step: SaltStep; nowMs: number }): Hex {
  return servedSalt(secret, c, { k: c.step.k, epoch: epochAt(c.nowMs) });
}

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const BYTES32 = /^0x[0-9a-fA-F]{64}$/;

/**
 * abi.encodePacked(address, string, uint256, bytes32) is plain concatenation: 20 address bytes,
 * the UTF-8 slug, the count as a 32-byte big-endian word, the 32 salt bytes. Written out rather
 * than through viem's `encodePacked` (a hex string round trip per field) because the paid path
 * computes it on every purchase, and once per candidate salt for a client that echoes none.
 * Throws on what viem would refuse to pack: a malformed address or salt, a count outside uint.
 */
export function bindingNonce({ payer, city, count, salt }: BindingNonceInput): Hex {
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
 * Every (k, minute) a challenge behind a still-valid authorization can have served, newest first.
 * The challenge was served at some t <= now, and the authorization lives at most
 * MAX_AUTH_LIFETIME_S from t, so t >= validBefore - MAX_AUTH_LIFETIME_S. Step i was served
 * during [steps[i].sinceMs, steps[i-1].sinceMs] (closed: a challenge read in the millisecond k
 * moved may carry either), the newest until now. `steps` is newest first, as the bundle's
 * history holds them; only the first SALT_STEPS_CHECKED are looked at.
 */
export function servedPoints(steps: readonly SaltStep[], nowMs: number, validBefore: number): SaltPoint[] {
  // A still-valid authorization has validBefore > now, so the floor is never below now - max.
  const lo = Math.max(0, (validBefore - MAX_AUTH_LIFETIME_S) * 1000, nowMs - MAX_AUTH_LIFETIME_S * 1000);
  const out: SaltPoint[] = [];
  let until = nowMs;
  const history = steps.length > 0 ? steps : [FIRST_STEP];
  for (const step of history.slice(0, SALT_STEPS_CHECKED)) {
    if (until < lo) break;
    // A step stamped after `until` (another process's clock ahead of ours) still counts from here.
    const since = Math.min(step.sinceMs, until);
    for (let e = epochAt(until); e >= epochAt(Math.max(since, lo)); e--) out.push({ k: step.k, epoch: e });
    until = since;
  }
  return out;
}

type BindingCheck = {
  city: string;
  count: number;
  steps: readonly SaltStep[];
  nowMs: number;
  /** The authorization's validBefore, unix seconds. */
  validBefore: number;
};

/** The point an echoed salt was served from, or null when this server cannot have served it. */
export function echoedPoint(secret: BindingSecret, salt: Hex, c: BindingCheck): SaltPoint | null {
  const wanted = salt.toLowerCase();
  for (const point of servedPoints(c.steps, c.nowMs, c.validBefore)) {
    if (servedSalt(secret, c, point) === wanted) return point;
  }
  return null;
}

/** The point whose salt binds `nonce` to (payer, city, count), or null when none does. */
export function matchBinding(
  secret: BindingSecret,
  c: BindingCheck & { payer: Address; nonce: Hex },
): SaltPoint | null {
  const nonce = c.nonce.toLowerCase();
  for (const point of servedPoints(c.steps, c.nowMs, c.validBefore)) {
    const salt = servedSalt(secret, c, point);
    if (bindingNonce({ payer: c.payer, city: c.city, count: c.count, salt }) === nonce) return point;
  }
  return null;
}

/**
 * The binding decision for one payment, in the two steps the spec's order needs (spec 5 and 4.3:
 * verify, sanctions, binding). `echoRefused`: the payload echoes a salt this server cannot have
 * served, refused before any signature recovery. `bound(payer, nonce)`: once the signature names
 * the payer, the point whose salt binds the nonce to (payer, city, count), or null (refused). An
 * echoed salt (already known to be served) binds exactly; without one, the nonce must come from
 * one of the salts served.
 */
type BindingDecision = {
  readonly echoRefused: boolean;
  bound(payer: Address, nonce: Hex): SaltPoint | null;
};

export function decideBinding(secret: BindingSecret, c: BindingCheck, echo: Hex | null): BindingDecision {
  const echoed = echo ? echoedPoint(secret, echo, c) : null;
  return {
    echoRefused: Boolean(echo) && echoed === null,
    bound(payer, nonce) {
      if (!echo) return matchBinding(secret, { ...c, payer, nonce });
      if (!echoed) return null;
      return bindingNonce({ payer, city: c.city, count: c.count, salt: echo }) === nonce ? echoed : null;
    },
  };
}

/** A known (payer, nonce) stays bound to the bundle it was bought for: another city or count is refused. */
export function boundToBundle(known: { city: string; count: number }, city: string, count: number): boolean {
  return known.city === city && known.count === count;
}
