import type { Address, Hex } from 'viem';
import type { Authorization } from '../../x402/networks.ts';
import type { Listing } from '../bazaar.ts';
import type { PaymentRequirementsV1 } from '../../x402/x-payment.ts';
import type { SupportedResult } from './negotiate.ts';

/** How a verified authorization becomes money moved: mock, facilitator, or our own chain submit. */
export type SettleRequest = {
  payer: Address;
  authorization: Authorization;
  signature: Hex;
  requirements: PaymentRequirementsV1;
  /** The ECDSA signature was recovered here, so a facilitator need not verify it separately. */
  signatureRecovered?: boolean;
  /** A new claim: no settle call for this authorization was ever made, so nothing can have landed from us. */
  fresh?: boolean;
  /** Our Bazaar listing (not the buyer's echo): a v2 settle carries it for cataloguing facilitators. */
  listing?: Listing | null;
};

/** `inDoubt` unless no transfer can happen from this call: only then may a buyer hear "not charged". */
export type SettleOutcome =
  | { ok: true; txHash: Hex | null; alreadySettled?: boolean }
  | {
      ok: false;
      reason: string;
      inDoubt: boolean;
      txHash?: Hex;
      /** False when nothing was sent where money could move: no transfer of ours can land. */
      sent?: boolean;
      /** Nothing was sent where money could move: the next facilitator may be asked (failover.ts). */
      unavailable?: boolean;
    };

/**
 * The token's word on (payer, nonce) at one block: `used` only if that transaction paid `payTo` exactly `value`;
 * `spent` and expired `unused` are definitely not charged; `unknown` stays in doubt.
 */
export type AuthorizationStatus =
  | { state: 'used'; txHash: Hex | null }
  | { state: 'spent'; txHash: Hex | null; reason: string }
  | { state: 'unused'; expired: boolean }
  | { state: 'unknown'; reason: string };

/** What the payment must have done on chain: paid `payTo` exactly `value` before `validBefore` (unix s). */
export type PaymentTerms = { validBefore: number; payTo: Address; value: bigint };

/** The terms a settle request's authorization carries (payee and amount were checked against ours). */
export const termsOf = (req: SettleRequest): PaymentTerms => ({
  validBefore: Number(req.authorization.validBefore),
  payTo: req.authorization.to,
  value: req.authorization.value,
});

/** The chain's word before a settle call: a used, spent or expired authorization ends it here; null goes ahead. */
export function settledBefore(st: AuthorizationStatus): SettleOutcome | null {
  if (st.state === 'used') return { ok: true, txHash: st.txHash, alreadySettled: true };
  if (st.state === 'spent') return { ok: false, inDoubt: false, reason: st.reason };
  if (st.state === 'unused' && st.expired)
    return { ok: false, inDoubt: false, reason: 'authorization expired before it could be settled' };
  return null;
}

export type Settler = {
  readonly kind: 'mock' | 'facilitator' | 'chain';
  settle(req: SettleRequest): Promise<SettleOutcome>;
  /** Never throws: a failure is `unknown`. */
  status(payer: Address, nonce: Hex, terms: PaymentTerms): Promise<AuthorizationStatus>;
  /** The longest one settle() can take (its own timeouts summed): the shutdown deadline exceeds it. */
  readonly maxSettleMs: number;
  /** A facilitator's `GET /supported`, read now, and the kind chosen from it (negotiate.ts). */
  supported?(): Promise<SupportedResult>;
  close?(): void;
};
