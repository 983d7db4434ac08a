import { z } from 'zod';
import type { Account, Address, Hex } from 'viem';
import { bindingNonce } from '../payments/binding.ts';
import { CHAIN_ID, NETWORK_ALIASES, TRANSFER_WITH_AUTHORIZATION_TYPES, USDC_NAME, USDC_VERSION, type Authorization } from '../payments/eip3009.ts';
import { encodeXPayment } from '../payments/x-payment.ts';

/**
 * The buyer side of the x402 flow, for tests and the CLI: read a 402 body, bind the nonce to
 * (payer, city, count) with the served salt, sign the EIP-3009 authorization and encode the
 * X-Payment header. It needs only the 402 body and a viem account that can sign typed data.
 */
const BindingShape = z.object({ citySlug: z.string(), count: z.number().int(), salt: z.string().regex(/^0x[0-9a-fA-F]{64}$/) }).loose();

const Accept = z.object({
  scheme: z.string(),
  network: z.string(),
  maxAmountRequired: z.string().regex(/^\d+$/),
  payTo: z.string().regex(/^0x[0-9a-fA-F]{40}$/),
  asset: z.string().regex(/^0x[0-9a-fA-F]{40}$/),
  maxTimeoutSeconds: z.number().int().positive(),
  extra: z.object({ name: z.string().optional(), version: z.string().optional(), binding: BindingShape.optional() }).loose().nullish(),
}).loose();

const Challenge = z.object({
  x402Version: z.literal(1),
  accepts: z.array(Accept).min(1),
  extra: z.object({ binding: BindingShape.optional() }).loose().optional(),
}).loose();

export type PayOptions = {
  /** The buyer's clock; defaults to Date.now(). */
  nowMs?: number;
  /** Authorization lifetime; capped at the challenge's maxTimeoutSeconds. */
  validForSeconds?: number;
};

export type Payment = {
  xPayment: string;
  nonce: Hex;
  payer: Address;
  authorization: Authorization;
  signature: Hex;
  city: string;
  count: number;
  amountAtomic: bigint;
};

/** Tolerated clock skew: the authorization is valid from a minute before the buyer's now. */
const VALID_AFTER_SKEW_S = 60;

export async function payFor402(challengeBody: unknown, account: Account, opts: PayOptions = {}): Promise<Payment> {
  if (!account.signTypedData) throw new Error('account cannot sign typed data');
  const body = Challenge.parse(challengeBody);
  const accept = body.accepts.find((a) => a.scheme === 'exact' && NETWORK_ALIASES.includes(a.network));
  if (!accept) throw new Error('402 offers no exact-scheme payment on eip155:8453');
  const binding = accept.extra?.binding ?? body.extra?.binding;
  if (!binding) throw new Error('402 carries no extra.binding; cannot bind the nonce');

  const nowS = Math.floor((opts.nowMs ?? Date.now()) / 1000);
  const validFor = Math.min(opts.validForSeconds ?? accept.maxTimeoutSeconds, accept.maxTimeoutSeconds);
  const nonce = bindingNonce(account.address, binding.citySlug, binding.count, binding.salt as Hex);
  const authorization: Authorization = {
    from: account.address,
    to: accept.payTo as Address,
    value: BigInt(accept.maxAmountRequired),
    validAfter: BigInt(Math.max(0, nowS - VALID_AFTER_SKEW_S)),
    validBefore: BigInt(nowS + validFor),
    nonce,
  };
  const signature = await account.signTypedData({
    domain: { name: accept.extra?.name ?? USDC_NAME, version: accept.extra?.version ?? USDC_VERSION, chainId: CHAIN_ID, verifyingContract: accept.asset as Address },
    types: TRANSFER_WITH_AUTHORIZATION_TYPES,
    primaryType: 'TransferWithAuthorization',
    message: authorization,
  });
  return {
    // The challenge's salt goes back as payload.salt when the server asks for it (extra.binding.saltEcho).
    xPayment: encodeXPayment(signature, authorization, accept.network, binding.saltEcho === 'payload.salt' ? binding.salt as Hex : undefined),
    nonce, payer: account.address, authorization, signature, city: binding.citySlug, count: binding.count,
    amountAtomic: authorization.value,
  };
}

export { decodeXPayment, decodePaymentResponse } from '../payments/x-payment.ts';
