import { createHmac, type KeyObject } from 'node:crypto';
import type { Db } from '../db/open.ts';
import type { Address, Hex } from 'viem';
import { boundedMap, type BoundedMap } from '../lib/bounded-map.ts';
import { keccak256Hex } from '../lib/keccak.ts';
import { ADDRESS, BYTES32 } from '../x402/x-payment.ts';
import { MAX_AUTH_LIFETIME_S, type BindingNonceInput } from '../../packages/isocast-client/src/binding.ts';

/** Nonce binding (spec 5): served salts are recomputed, never stored (docs/payments.md "Binding salt"). */
export const SALT_EPOCH_S = 60;
/** Steps of a bundle's k tried for one payment, newest first; salt_steps keeps as many per bundle. */
export const SALT_STEPS_CHECKED = 64;

/** A KeyObject on the paid path, so no HMAC copies the key again. */
type BindingSecret = Buffer | KeyObject;

/** k became the bundle's served step at `sinceMs` (server clock). */
export type SaltStep = { k: number; sinceMs: number };
type SaltPoint = { k: number; epoch: number };

export const FIRST_STEP: SaltStep = { k: 0, sinceMs: 0 };

export function epochAt(ms: number): number {
  return Math.floor(ms / (SALT_EPOCH_S * 1000));
}

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

export function currentSalt(secret: BindingSecret, c: SaltBundle & { step: SaltStep; nowMs: number }): Hex {
  return servedSalt(secret, c, { k: c.step.k, epoch: epochAt(c.nowMs) });
}

/** encodePacked written out (viem's per-field hex round trip is slow per candidate salt); throws where viem would. */
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
 * Every (k, minute) a challenge behind a still-valid authorization can have served, newest first; step i covers
 * [steps[i].sinceMs, steps[i-1].sinceMs], closed because a challenge read in the millisecond k moved may carry either.
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

/** The served point whose salt is `wanted` or, given a payer, binds the nonce `wanted` to (payer, city, count). */
function servedPointOf(secret: BindingSecret, c: BindingCheck & { payer?: Address }, wanted: Hex): SaltPoint | null {
  const w = wanted.toLowerCase();
  const { payer } = c;
  for (const point of servedPoints(c.steps, c.nowMs, c.validBefore)) {
    const salt = servedSalt(secret, c, point);
    if ((payer ? bindingNonce({ payer, city: c.city, count: c.count, salt }) : salt) === w) return point;
  }
  return null;
}

/** In the spec's order (4.3, 5): `echoRefused` before signature recovery, `bound(payer, nonce)` after it. */
export function decideBinding(secret: BindingSecret, c: BindingCheck, echo: Hex | null) {
  const echoed = echo ? servedPointOf(secret, c, echo) : null;
  return {
    echoRefused: Boolean(echo) && echoed === null,
    bound(payer: Address, nonce: Hex): SaltPoint | null {
      if (!echo) return servedPointOf(secret, { ...c, payer }, nonce);
      if (!echoed) return null;
      return bindingNonce({ payer, city: c.city, count: c.count, salt: echo }) === nonce ? echoed : null;
    },
  };
}

/** A known (payer, nonce) stays bound to the bundle it was bought for: another city or count is refused. */
export function boundToBundle(known: { city: string; count: number }, city: string, count: number): boolean {
  return known.city === city && known.count === count;
}

/** The read side of `salt_steps`: only the trigger that marks a payment settled writes it, in that statement. */
export function createSaltSteps(db: Db) {
  const recent = db.prepare(
    'SELECT k, since AS sinceMs FROM salt_steps WHERE city = +? AND count = +? ORDER BY k DESC LIMIT +?',
  );
  return {
    current: (city: string, count: number): SaltStep =>
      (recent.get(city, count, 1) as SaltStep | undefined) ?? FIRST_STEP,
    /** The newest steps, newest first, ending with k = 0 when the history still reaches it. */
    recent(city: string, count: number): SaltStep[] {
      const rows = recent.all(city, count, SALT_STEPS_CHECKED) as SaltStep[];
      if (rows.length < SALT_STEPS_CHECKED && (rows.at(-1)?.k ?? 1) === 1) rows.push(FIRST_STEP);
      return rows;
    },
  };
}
