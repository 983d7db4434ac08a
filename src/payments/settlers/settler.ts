import type { Address, Hex } from 'viem';
import type { Authorization } from '../eip3009.ts';
import type { PaymentPayloadV1 } from '../x-payment.ts';

/**
 * One interface for the three ways a verified authorization becomes money moved: `mock`
 * (nothing moves), `facilitator` (an x402 v1 facilitator submits it) and `chain` (we submit
 * transferWithAuthorization ourselves).
 */
export type SettleRequest = {
  payer: Address;
  authorization: Authorization;
  signature: Hex;
  /** The client's PaymentPayload as received, for settlers that forward it. */
  payload: PaymentPayloadV1;
  /** Standard x402 v1 PaymentRequirements the payload answers. */
  requirements: PaymentRequirementsV1;
};

export type PaymentRequirementsV1 = {
  scheme: 'exact';
  network: string;
  maxAmountRequired: string;
  resource: string;
  description: string;
  mimeType: string;
  payTo: string;
  maxTimeoutSeconds: number;
  asset: string;
  extra: Record<string, unknown>;
};

export type SettleOutcome =
  | { ok: true; txHash: Hex; alreadySettled?: boolean }
  /** inDoubt: the transfer may still land (sent, not confirmed); the claim stays open. */
  | { ok: false; reason: string; inDoubt?: boolean };

/** What a settler can tell about an authorization whose settle call was interrupted. */
export type SettlementLookup = { found: Hex } | { found: null } | { unknown: true };

export type Settler = {
  readonly kind: 'mock' | 'facilitator' | 'chain';
  settle(req: SettleRequest): Promise<SettleOutcome>;
  lookup(payer: Address, nonce: Hex): Promise<SettlementLookup>;
};
