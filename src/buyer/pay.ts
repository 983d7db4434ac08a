import { z } from 'zod';
import type { Account, Address, Hex } from 'viem';
import { bindingNonce, MAX_AUTH_LIFETIME_S } from '../payments/binding.ts';
import {
  CHAIN_ID,
  NETWORK_ALIASES,
  TRANSFER_WITH_AUTHORIZATION_TYPES,
  USDC_NAME,
  USDC_VERSION,
  type Authorization,
} from '../payments/eip3009.ts';
import {
  ChallengeRefused,
  checkChallenge,
  type Accept as AcceptEntry,
  type Binding,
  type Expectations,
} from './guard.ts';

/**
 * The buyer side of the x402 flow, for the CLI, tests and any program: read a 402 body, check it
 * (guard.ts: exact bundle price, USDC on Base, the expected recipient; nothing is signed
 * otherwise), bind the nonce to (payer, city, count) with the served salt, sign the EIP-3009
 * authorization and encode the X-Payment header. When the challenge says `saltEcho:
 * "payload.salt"` the salt goes back in the payload beside the signature; older servers that do
 * not ask for it get the plain x402 v1 payload.
 */
const BindingShape = z
  .object({
    citySlug: z.string(),
    count: z.number().int(),
    salt: z.string().regex(/^0x[0-9a-fA-F]{64}$/),
    saltEcho: z.string().optional(),
  })
  .loose();

const Accept = z
  .object({
    scheme: z.string(),
    network: z.string(),
    maxAmountRequired: z.string(),
    payTo: z.string(),
    asset: z.string(),
    maxTimeoutSeconds: z.number().int().positive(),
    extra: z
      .object({ name: z.string().optional(), version: z.string().optional(), binding: BindingShape.optional() })
      .loose()
      .nullish(),
  })
  .loose();

const Challenge = z
  .object({
    x402Version: z.literal(1),
    accepts: z.array(Accept).min(1),
    extra: z.object({ binding: BindingShape.optional() }).loose().optional(),
  })
  .loose();

export type PayOptions = {
  /** The buyer's clock; defaults to Date.now(). */
  nowMs?: number;
  /** Authorization lifetime; capped at the challenge's maxTimeoutSeconds and at what the server accepts. */
  validForSeconds?: number;
  /** What the buyer means to buy and from whom; the price and token checks run regardless. */
  expect?: Expectations;
  /**
   * Asked after every check passed and before anything is signed, so a hardware or remote signer
   * is never asked to sign what the user then declines. False aborts with PaymentDeclined.
   */
  confirm?: (p: { amountAtomic: bigint; payTo: Address; city: string; count: number }) => Promise<boolean>;
};

/** The user said no at the confirmation question; nothing was signed. */
export class PaymentDeclined extends Error {}

export type Payment = {
  xPayment: string;
  nonce: Hex;
  payer: Address;
  authorization: Authorization;
  signature: Hex;
  city: string;
  count: number;
  amountAtomic: bigint;
  payTo: Address;
  /** Present when the server asked for the salt back (`saltEcho`). */
  salt?: Hex;
};

/** Tolerated clock skew: the authorization is valid from a minute before the buyer's now. */
const VALID_AFTER_SKEW_S = 60;

export type SignableAccount = Pick<Account, 'address'> & { signTypedData?: Account['signTypedData'] };

/** The bound, checked, signed `exact` payload for one accepts entry; shared with the x402 scheme. */
export async function signExact(
  account: SignableAccount,
  body: unknown,
  accept: AcceptEntry,
  binding: Binding,
  opts: PayOptions,
  /** Return the salt as payload.salt (x402 v1 when the binding asks); a v2 payload's `accepted` echoes it already. */
  echoSalt = binding.saltEcho === 'payload.salt',
): Promise<{ authorization: Authorization; signature: Hex; payload: Record<string, unknown>; amount: bigint }> {
  if (!account.signTypedData) throw new Error('account cannot sign typed data');
  const amount = checkChallenge(body, accept, binding, opts.expect ?? {});
  if (
    opts.confirm &&
    !(await opts.confirm({
      amountAtomic: amount,
      payTo: accept.payTo as Address,
      city: binding.citySlug,
      count: binding.count,
    }))
  ) {
    throw new PaymentDeclined('declined at the confirmation question');
  }
  const nowS = Math.floor((opts.nowMs ?? Date.now()) / 1000);
  const validFor = Math.min(
    opts.validForSeconds ?? accept.maxTimeoutSeconds,
    accept.maxTimeoutSeconds,
    MAX_AUTH_LIFETIME_S,
  );
  if (!(validFor > 0)) throw new ChallengeRefused(`the challenge allows ${accept.maxTimeoutSeconds} s to pay`);
  const authorization: Authorization = {
    from: account.address,
    to: accept.payTo as Address,
    value: amount,
    validAfter: BigInt(Math.max(0, nowS - VALID_AFTER_SKEW_S)),
    validBefore: BigInt(nowS + validFor),
    nonce: bindingNonce(account.address, binding.citySlug, binding.count, binding.salt),
  };
  const signature = await account.signTypedData({
    domain: { name: USDC_NAME, version: USDC_VERSION, chainId: CHAIN_ID, verifyingContract: accept.asset as Address },
    types: TRANSFER_WITH_AUTHORIZATION_TYPES,
    primaryType: 'TransferWithAuthorization',
    message: authorization,
  });
  const a = authorization;
  const payload: Record<string, unknown> = {
    signature,
    authorization: {
      from: a.from,
      to: a.to,
      value: a.value.toString(),
      validAfter: a.validAfter.toString(),
      validBefore: a.validBefore.toString(),
      nonce: a.nonce,
    },
    ...(echoSalt ? { salt: binding.salt } : {}),
  };
  return { authorization, signature, payload, amount };
}

/** The binding of the accepts entry (or the top-level one), or null. */
export function bindingOf(
  accept: { extra?: { binding?: unknown } | null },
  body?: { extra?: { binding?: unknown } },
): Binding | null {
  const parsed = BindingShape.safeParse(accept.extra?.binding ?? body?.extra?.binding);
  return parsed.success ? (parsed.data as Binding) : null;
}

export async function payFor402(
  challengeBody: unknown,
  account: SignableAccount,
  opts: PayOptions = {},
): Promise<Payment> {
  const parsed = Challenge.safeParse(challengeBody);
  if (!parsed.success)
    throw new ChallengeRefused(
      `not an x402 v1 payment challenge (${parsed.error.issues[0]!.path.join('.') || 'body'}: ${parsed.error.issues[0]!.message})`,
    );
  const body = parsed.data;
  const accept = body.accepts.find((a) => a.scheme === 'exact' && NETWORK_ALIASES.includes(a.network));
  if (!accept) {
    const offered = body.accepts.map((a) => `${a.scheme} on ${a.network}`).join(', ');
    throw new ChallengeRefused(`the challenge offers ${offered}, not an exact-scheme payment on Base (eip155:8453)`);
  }
  const binding = bindingOf(accept, body);
  if (!binding) throw new ChallengeRefused('402 carries no extra.binding; cannot bind the nonce');
  const signed = await signExact(account, challengeBody, accept, binding, opts);
  const header = { x402Version: 1, scheme: 'exact', network: accept.network, payload: signed.payload };
  return {
    xPayment: Buffer.from(JSON.stringify(header), 'utf8').toString('base64'),
    nonce: signed.authorization.nonce,
    payer: account.address,
    authorization: signed.authorization,
    signature: signed.signature,
    city: binding.citySlug,
    count: binding.count,
    amountAtomic: signed.amount,
    payTo: accept.payTo as Address,
    ...(signed.payload.salt ? { salt: binding.salt } : {}),
  };
}

export { ChallengeRefused } from './guard.ts';
export { decodeXPayment, decodePaymentResponse } from '../payments/x-payment.ts';
