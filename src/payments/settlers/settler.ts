import type { Address, Hex } from 'viem';
import type { Authorization } from '../../x402/networks.ts';
import type { Listing } from '../bazaar.ts';
import type { PaymentPayloadV1, PaymentRequirementsV1 } from '../../x402/x-payment.ts';
import type { SupportedResult } from './negotiate.ts';

/**
 * One interface for the three ways a verified authorization becomes money moved: `mock`
 * (nothing moves), `facilitator` (an x402 facilitator submits it) and `chain` (we submit
 * transferWithAuthorization ourselves).
 */
export type SettleRequest = {
  payer: Address;
  authorization: Authorization;
  signature: Hex;
  /** The client's PaymentPayload as received, minus anything a facilitator does not expect. */
  payload: PaymentPayloadV1;
  /** Standard x402 v1 PaymentRequirements the payload answers. */
  requirements: PaymentRequirementsV1;
  /**
   * True when the signature was recovered here (ECDSA) to `authorization.from` just before this
   * call, as opposed to a contract wallet's check through the chain: a facilitator need not be
   * asked to verify it separately.
   */
  signatureRecovered?: boolean;
  /** A new claim: no settle call for this authorization was ever made, so nothing can have landed from us. */
  fresh?: boolean;
  /**
   * The paid route's Bazaar listing (bazaar.ts): a v2 settle carries its description as
   * `resource.description` and its declaration as `paymentPayload.extensions`, which is what a
   * cataloguing facilitator lists. Ours, not the buyer's echo.
   */
  listing?: Listing | null;
};

/**
 * `ok` with the transaction that moved the money (null only from a settler with no chain to read); `alreadySettled` when the transfer was found
 * rather than made by this call. A failure is `inDoubt` unless the settler knows for certain that
 * no transfer happened and none can happen from this call: only then may a buyer be told "not
 * charged".
 */
export type SettleOutcome =
  | { ok: true; txHash: Hex | null; alreadySettled?: boolean }
  | {
      ok: false;
      reason: string;
      inDoubt: boolean;
      txHash?: Hex;
      /** False when nothing was sent where money could move: no transfer of ours can land. */
      sent?: boolean;
      /**
       * The settler could not take the request and nothing of it was sent where money could move
       * (unreachable, a /verify that failed or answered 5xx, a /supported without our kind): the
       * next facilitator may be asked in the same request (failover.ts).
       */
      unavailable?: boolean;
    };

/**
 * What the token contract says about (payer, nonce), read at one block: `used`
 * only when the transaction that used the nonce paid `payTo` exactly `value`
 * (settlement-proof.ts); `spent` when the nonce is used up without that transfer (cancelled, or
 * used with another transfer): definitely not charged; `unused` with `expired` when that block's
 * time is at or past validBefore (so no later block can include it: truly not charged), or
 * `unknown` when nothing definitive could be learned (the payment stays in doubt).
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

export type Settler = {
  readonly kind: 'mock' | 'facilitator' | 'chain';
  settle(req: SettleRequest): Promise<SettleOutcome>;
  /** Never throws: a failure is `unknown`. */
  status(payer: Address, nonce: Hex, terms: PaymentTerms): Promise<AuthorizationStatus>;
  /** The longest one settle() can take (its own timeouts summed): the shutdown deadline exceeds it. */
  readonly maxSettleMs: number;
  /** A facilitator's `GET /supported`, read now, and the kind chosen from it (negotiate.ts). */
  supported?(): Promise<SupportedResult>;
  /** Releases pooled connections (the facilitator's keep-alive sockets), where there are any. */
  close?(): void;
};
