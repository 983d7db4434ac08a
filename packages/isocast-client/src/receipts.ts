import type { Account, Address, Hex } from 'viem';
import { originOf, type ReceiptSignedKind, receiptTypedData } from './receipt-typed-data.ts';
import { stripControls } from './sanitize.ts';

/**
 * Receipt recovery and revocation. A receipt token (the bearer for `GET /v1/signals`) comes back
 * once, with the purchase; a buyer who lost it signs a ReceiptRequest(wallet, origin, timestamp)
 * for the server's origin and `POST /v1/receipts` answers a fresh token and the wallet's
 * entitlements per city: one free signature, not a purchase. A ReceiptRevocation signature
 * (`POST /v1/receipts/revoke`) stops every token of the wallet at that server.
 *
 * Nothing here signs twice on its own: "signature already used" means something else sent this
 * exact signature first (a copy of it leaked), which the caller must see, not have retried away.
 */
export type ReceiptSigner = Pick<Account, 'address'> & { signTypedData?: Account['signTypedData'] };

export type SignedReceiptBody = { wallet: Address; origin: string; timestamp: number; signature: Hex };

/** What `signReceiptBody` signs: `kind` for `server`'s origin at `timestampS` (unix seconds). */
export type ReceiptBodyRequest = { server: string; kind: ReceiptSignedKind; timestampS: number };

/** The JSON body of `POST /v1/receipts` (or `/revoke`), signed for `server`'s origin. */
export async function signReceiptBody(
  account: ReceiptSigner,
  { server, kind, timestampS }: ReceiptBodyRequest,
): Promise<SignedReceiptBody> {
  if (!account.signTypedData) throw new Error('account cannot sign typed data');
  const origin = originOf(server);
  const signature = await account.signTypedData(
    receiptTypedData(kind, { wallet: account.address, origin, timestamp: timestampS }),
  );
  return { wallet: account.address, origin, timestamp: timestampS, signature };
}

export type RecoveredReceipt = {
  receiptToken: string;
  /** When the token stops reading; null when the server's tokens never expire. */
  expiresAt: string | null;
  /** Every city the wallet has bought there, with its entitlement ceiling. */
  cities: { city: string; paidThroughSeq: number }[];
};

/**
 * Why a signed receipt request did not give a token: `no-purchases` (this wallet bought nothing
 * there), `unsupported` (an isocast without the endpoint), `signature-used` (see above), `clock`
 * (the timestamp is more than 10 minutes off the server's clock), `refused` (any other 401 or 403,
 * such as a signature made for another origin), `failed` (anything else).
 */
export type ReceiptFailure = 'no-purchases' | 'unsupported' | 'signature-used' | 'clock' | 'refused' | 'failed';

export type ReceiptAnswer<T> =
  | { ok: true; value: T }
  | { ok: false; reason: ReceiptFailure; status: number; error: string };

/** `error` plus `reason` when the server gave one, stripped of control characters and capped. */
export function serverErrorText(status: number, body: unknown): string {
  const b = (body ?? {}) as { error?: unknown; reason?: unknown };
  const cap = (s: string) => stripControls(s.length > 300 ? `${s.slice(0, 300)}...` : s);
  const error = typeof b.error === 'string' ? cap(b.error) : `HTTP ${status}`;
  return typeof b.reason === 'string' ? `${error} (${cap(b.reason)})` : error;
}

function failure(status: number, body: unknown): { ok: false; reason: ReceiptFailure; status: number; error: string } {
  const error = serverErrorText(status, body);
  const raw = String((body as { error?: unknown } | null)?.error ?? '');
  const reason: ReceiptFailure =
    status === 404 && /no purchases/.test(raw)
      ? 'no-purchases'
      : status === 404 || status === 405
        ? 'unsupported'
        : status === 401 && /already used/.test(raw)
          ? 'signature-used'
          : status === 401 && /stale/.test(raw)
            ? 'clock'
            : status === 401 || status === 403
              ? 'refused'
              : 'failed';
  return { ok: false, reason, status, error };
}

/** Reads the answer of `POST /v1/receipts` (status and parsed JSON body). */
export function readReceiptAnswer(status: number, body: unknown): ReceiptAnswer<RecoveredReceipt> {
  if (status !== 200) return failure(status, body);
  const b = (body ?? {}) as { receiptToken?: unknown; expiresAt?: unknown; cities?: unknown };
  if (typeof b.receiptToken !== 'string' || b.receiptToken === '')
    return { ok: false, reason: 'failed', status, error: 'the server answered the receipt request without a token' };
  const cities = (Array.isArray(b.cities) ? b.cities : [])
    .filter(
      (c: { city?: unknown; paidThroughSeq?: unknown } | null) =>
        typeof c?.city === 'string' && Number.isSafeInteger(c?.paidThroughSeq),
    )
    .map((c: { city: string; paidThroughSeq: number }) => ({ city: c.city, paidThroughSeq: c.paidThroughSeq }));
  const expiresAt = typeof b.expiresAt === 'string' ? b.expiresAt : null;
  return { ok: true, value: { receiptToken: b.receiptToken, expiresAt, cities } };
}

/** Reads the answer of `POST /v1/receipts/revoke`: how many tokens stopped working. */
export function readRevocationAnswer(status: number, body: unknown): ReceiptAnswer<{ revoked: number }> {
  const revoked = (body as { revoked?: unknown } | null)?.revoked;
  if (status === 200 && Number.isSafeInteger(revoked)) return { ok: true, value: { revoked: revoked as number } };
  if (status === 200) return { ok: false, reason: 'failed', status, error: 'the server did not say how many tokens' };
  return failure(status, body);
}

/** A receipt request or revocation the server did not grant; `reason` says what to do about it. */
export class ReceiptError extends Error {
  readonly reason: ReceiptFailure;
  readonly status: number;
  constructor(what: string, answer: { reason: ReceiptFailure; status: number; error: string }) {
    super(`${what} refused (HTTP ${answer.status}): ${answer.error}`);
    this.name = 'ReceiptError';
    this.reason = answer.reason;
    this.status = answer.status;
  }
}

export type ReceiptCallOptions = {
  /** The isocast server, e.g. `https://isocast.example`; the signature names its origin. */
  server: string;
  account: ReceiptSigner;
  /** The buyer's clock (ms); defaults to Date.now(). */
  nowMs?: number;
  /** Defaults to 15 s. */
  timeoutMs?: number;
  /** Defaults to the global fetch. */
  fetch?: typeof fetch;
};

async function post(o: ReceiptCallOptions, kind: ReceiptSignedKind, path: string) {
  const body = await signReceiptBody(o.account, {
    server: o.server,
    kind,
    timestampS: Math.floor((o.nowMs ?? Date.now()) / 1000),
  });
  const res = await (o.fetch ?? fetch)(new URL(path, o.server), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(o.timeoutMs ?? 15_000),
  });
  const text = await res.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    json = { error: text.slice(0, 200) };
  }
  return { status: res.status, json };
}

/**
 * A fresh receipt token for `account` at `server`, and the cities it has bought there; one
 * signature, no payment. Throws ReceiptError (with `reason`) when the server does not grant it.
 */
export async function recoverReceipt(o: ReceiptCallOptions): Promise<RecoveredReceipt> {
  const { status, json } = await post(o, 'ReceiptRequest', '/v1/receipts');
  const a = readReceiptAnswer(status, json);
  if (!a.ok) throw new ReceiptError('receipt recovery', a);
  return a.value;
}

/** Revokes every receipt token of `account` at `server`; entitlements stay, a new token is one recoverReceipt away. */
export async function revokeReceipts(o: ReceiptCallOptions): Promise<{ revoked: number }> {
  const { status, json } = await post(o, 'ReceiptRevocation', '/v1/receipts/revoke');
  const a = readRevocationAnswer(status, json);
  if (!a.ok) throw new ReceiptError('revocation', a);
  return a.value;
}
