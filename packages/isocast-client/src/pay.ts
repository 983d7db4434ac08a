import type { Account, Address, Hex } from 'viem';
import { base64Json } from './base64.ts';
import { bindingNonce, MAX_AUTH_LIFETIME_S } from './binding.ts';
import {
  authorizationJson,
  BASE_ALIASES,
  BASE_CHAIN_ID,
  TRANSFER_WITH_AUTHORIZATION_TYPES,
  USDC_NAME,
  USDC_VERSION,
  type Authorization,
} from './chain.ts';
import {
  type Accept as AcceptEntry,
  type Binding,
  type Challenge,
  ChallengeRefused,
  checkChallenge,
  type Expectations,
} from './guard.ts';

/**
 * The buyer side of the x402 flow: read a 402 body, check it (guard.ts: exact bundle price, USDC
 * on Base, the expected recipient; nothing is signed otherwise), bind the nonce to (payer, city,
 * count) with the served salt, sign the EIP-3009 authorization and encode the X-Payment header.
 * When the challenge says `saltEcho: "payload.salt"` the salt goes back in the payload beside the
 * signature; older servers that do not ask for it get the plain x402 v1 payload.
 *
 * The challenge is a server's JSON: every field read is checked here at run time, by hand rather
 * than with a schema library, so the package has no dependency beyond its viem peer.
 */
type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const SALT = /^0x[0-9a-fA-F]{64}$/;

/** The first problem of a binding object, as `field: problem`, or null. */
function bindingProblem(b: unknown): string | null {
  if (!isObj(b)) return 'expected an object';
  if (typeof b.citySlug !== 'string') return 'citySlug: expected a string';
  if (!Number.isInteger(b.count)) return 'count: expected an integer';
  if (typeof b.salt !== 'string' || !SALT.test(b.salt)) return 'salt: expected 32 bytes of hex';
  if (b.saltEcho !== undefined && typeof b.saltEcho !== 'string') return 'saltEcho: expected a string';
  return null;
}

/** The first problem of one `accepts` entry, as `field: problem`, or null. */
function acceptProblem(a: unknown): string | null {
  if (!isObj(a)) return 'expected an object';
  for (const k of ['scheme', 'network', 'maxAmountRequired', 'payTo', 'asset'])
    if (typeof a[k] !== 'string') return `${k}: expected a string`;
  const t = a.maxTimeoutSeconds;
  if (!Number.isInteger(t) || (t as number) <= 0) return 'maxTimeoutSeconds: expected a positive integer';
  if (a.extra === undefined || a.extra === null) return null;
  if (!isObj(a.extra)) return 'extra: expected an object';
  for (const k of ['name', 'version'])
    if (a.extra[k] !== undefined && typeof a.extra[k] !== 'string') return `extra.${k}: expected a string`;
  const b = a.extra.binding === undefined ? null : bindingProblem(a.extra.binding);
  return b && `extra.binding.${b}`;
}

/** Why a body is not an x402 v1 challenge this client can read, or null when it is one. */
function challengeProblem(body: unknown): string | null {
  if (!isObj(body)) return 'body: expected an object';
  if (body.x402Version !== 1) return `x402Version: expected 1, got ${JSON.stringify(body.x402Version) ?? 'nothing'}`;
  if (!Array.isArray(body.accepts) || body.accepts.length === 0) return 'accepts: expected a non-empty array';
  for (let i = 0; i < body.accepts.length; i++) {
    const p = acceptProblem(body.accepts[i]);
    if (p) return `accepts.${i}.${p}`;
  }
  if (body.extra === undefined) return null;
  if (!isObj(body.extra)) return 'extra: expected an object';
  const b = body.extra.binding === undefined ? null : bindingProblem(body.extra.binding);
  return b && `extra.binding.${b}`;
}

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
export class PaymentDeclined extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PaymentDeclined';
  }
}

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

/**
 * The challenge `signExact` signs. `echoSalt`: return the salt as payload.salt (x402 v1 when the
 * binding asks, the default); a v2 payload's `accepted` echoes it already.
 */
export type ExactChallenge = Challenge & { echoSalt?: boolean };

/** The bound, checked, signed `exact` payload for one accepts entry; shared with the x402 scheme. */
export async function signExact(
  account: SignableAccount,
  challenge: ExactChallenge,
  opts: PayOptions,
): Promise<{ authorization: Authorization; signature: Hex; payload: Record<string, unknown>; amount: bigint }> {
  if (!account.signTypedData) throw new Error('account cannot sign typed data');
  const { accept, binding } = challenge;
  const echoSalt = challenge.echoSalt ?? binding.saltEcho === 'payload.salt';
  const amount = checkChallenge(challenge, opts.expect ?? {});
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
    nonce: bindingNonce({ payer: account.address, city: binding.citySlug, count: binding.count, salt: binding.salt }),
  };
  const signature = await account.signTypedData({
    domain: {
      name: USDC_NAME,
      version: USDC_VERSION,
      chainId: BASE_CHAIN_ID,
      verifyingContract: accept.asset as Address,
    },
    types: TRANSFER_WITH_AUTHORIZATION_TYPES,
    primaryType: 'TransferWithAuthorization',
    message: authorization,
  });
  const payload: Record<string, unknown> = {
    signature,
    authorization: authorizationJson(authorization),
    ...(echoSalt ? { salt: binding.salt } : {}),
  };
  return { authorization, signature, payload, amount };
}

/** The binding of the accepts entry (or the top-level one), or null. */
export function bindingOf(
  accept: { extra?: { binding?: unknown } | null },
  body?: { extra?: { binding?: unknown } },
): Binding | null {
  const b = accept.extra?.binding ?? body?.extra?.binding;
  return bindingProblem(b) === null ? (b as Binding) : null;
}

export async function payFor402(
  challengeBody: unknown,
  account: SignableAccount,
  opts: PayOptions = {},
): Promise<Payment> {
  const problem = challengeProblem(challengeBody);
  if (problem) throw new ChallengeRefused(`not an x402 v1 payment challenge (${problem})`);
  const body = challengeBody as { accepts: AcceptEntry[]; extra?: { binding?: unknown } };
  const accept = body.accepts.find((a) => a.scheme === 'exact' && BASE_ALIASES.includes(a.network));
  if (!accept) {
    const offered = body.accepts.map((a) => `${a.scheme} on ${a.network}`).join(', ');
    throw new ChallengeRefused(`the challenge offers ${offered}, not an exact-scheme payment on Base (eip155:8453)`);
  }
  const binding = bindingOf(accept, body);
  if (!binding) throw new ChallengeRefused('402 carries no extra.binding; cannot bind the nonce');
  const signed = await signExact(account, { body: challengeBody, accept, binding }, opts);
  const header = { x402Version: 1, scheme: 'exact', network: accept.network, payload: signed.payload };
  return {
    xPayment: base64Json(header),
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
