import type { EVMMessageVerifier, SIWxExtension, SIWxPayload } from '@x402/extensions/sign-in-with-x';
import type { Db } from '../db/open.ts';
import { createSingleUse, type CrossNodeUses } from '../db/single-use.ts';
import type { Clock } from '../lib/clock.ts';
import { ERRORS, sanctioned, siwxRefused, siwxUnverifiable } from '../lib/api-errors.ts';
import { ApiError } from '../lib/errors.ts';
import { SIGNED_REQUEST_SKEW_SEC, signedLifetime, skewOf } from '../lib/signed-request.ts';
import { once } from '../lib/once.ts';
import type { SanctionsList } from '../sanctions/list.ts';
import { NETWORK } from '../x402/networks.ts';
import { echoedVerbatim } from '../x402/v2.ts';
import { MAX_HEADER_CHARS } from '../x402/x-payment.ts';

/**
 * `sign-in-with-x`: the 402's declaration, the message checks (not the library's `validateSIWxMessage`: it reads
 * `Date.now()`, allows no skew on `issuedAt` and no `expirationTime` for ever) and the sign-in that consumes one.
 */
export const SIWX_HEADER = 'sign-in-with-x';
const SIWX_DECLARED_LIFETIME_SEC = 300;
/** The longest a sign-in may live, from issuedAt and from now: the signed-request window (lib/signed-request.ts). */
export const SIWX_MAX_LIFETIME_SEC = SIGNED_REQUEST_SKEW_SEC;
/** EIP-4361: a nonce is at least 8 alphanumeric characters; the cap bounds what is stored. */
const NONCE = /^[A-Za-z0-9]{8,128}$/;
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

export const SIWX_ERRORS = {
  malformed: 'SIGN-IN-WITH-X header malformed',
  otherServer: 'sign-in-with-x is for another server',
  chain: `sign-in-with-x must be signed for chain ${NETWORK} (eip191)`,
  expired: 'sign-in-with-x expired; sign the one in a fresh 402',
  lifetime: `sign-in-with-x must carry an expirationTime at most ${SIWX_MAX_LIFETIME_SEC} s ahead`,
  notYetValid: 'sign-in-with-x not yet valid (notBefore)',
  stale: ERRORS.stale_timestamp.message,
  signature: 'sign-in-with-x signature verification failed',
  nonceUsed: 'sign-in-with-x nonce already used; sign the one in a fresh 402',
} as const;

/** `code`: the library's invalidReason names where one fits, so a stock client can match them. */
type SiwxRefusal = { error: string; code: string; reason?: string };

const text = { type: 'string' } as const;
const uri = { type: 'string', format: 'uri' } as const;
const instant = { type: 'string', format: 'date-time' } as const;
/** The message's fields in the library's order; those not listed in SHAPES are plain strings. */
const FIELDS =
  'domain address statement uri version chainId type nonce issuedAt expirationTime notBefore requestId resources signature';
const SHAPES: Record<string, object> = {
  uri,
  issuedAt: instant,
  expirationTime: instant,
  notBefore: instant,
  resources: { type: 'array', items: uri },
};

/** The library's `declareSIWxExtension` less `_options`, written out: no start evaluates it (siwx.test.ts compares). */
const DECLARED = {
  info: { version: '1' },
  supportedChains: [{ chainId: NETWORK, type: 'eip191' }],
  schema: {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    properties: Object.fromEntries(FIELDS.split(' ').map((k) => [k, SHAPES[k] ?? text])),
    required: ['domain', 'address', 'uri', 'version', 'chainId', 'type', 'nonce', 'issuedAt', 'signature'],
  },
} as SIWxExtension;

const echoSchema = once(() => echoedVerbatim('schema', DECLARED.schema));

/** The `extensions` entry of a `GET /v1/signals` 402, filled as the library's server does, for a stock client. */
export function siwxExtension(i: {
  baseUrl: string;
  resourcePath: string;
  nowMs: number;
  nonce: string;
}): Record<string, SIWxExtension> {
  const uri = `${i.baseUrl}${i.resourcePath}`;
  echoSchema();
  return {
    [SIWX_HEADER]: {
      ...DECLARED,
      info: {
        ...DECLARED.info,
        domain: new URL(i.baseUrl).host,
        uri,
        nonce: i.nonce,
        issuedAt: new Date(i.nowMs).toISOString(),
        // No statement or `resources` (the uri again): PAYMENT-REQUIRED stays under proxies' 8 KiB.
        expirationTime: new Date(i.nowMs + SIWX_DECLARED_LIFETIME_SEC * 1000).toISOString(),
      },
    },
  };
}

const instantOf = (s: string): number | null => {
  const ms = Date.parse(s);
  return Number.isFinite(ms) ? ms : null;
};

const refusal = (error: string, code: string, reason?: string): SiwxRefusal =>
  reason === undefined ? { error, code } : { error, code, reason };
const notInstant = (field: string) => `${field} is not an ISO 8601 instant`;

/** Everything about a parsed sign-in but its signature and its nonce's use; null when it passes. */
export function checkSiwxMessage(p: SIWxPayload, expect: { baseUrl: string; nowMs: number }): SiwxRefusal | null {
  const { malformed, lifetime: tooLong } = SIWX_ERRORS;
  const base = new URL(expect.baseUrl);
  const uri = URL.parse(p.uri);
  const basePath = base.pathname.replace(/\/+$/, '');
  const uriUnderBase =
    uri !== null &&
    uri.origin === base.origin &&
    (basePath === '' || uri.pathname === basePath || uri.pathname.startsWith(`${basePath}/`));
  if (p.domain !== base.host || !uriUnderBase) {
    const code = p.domain !== base.host ? 'invalid_siwx_domain_mismatch' : 'invalid_siwx_uri_mismatch';
    const signed = `signed for domain ${JSON.stringify(p.domain)} and uri ${JSON.stringify(p.uri)}`;
    return refusal(SIWX_ERRORS.otherServer, code, `${signed}; this server is ${base.origin}${basePath}`);
  }
  if (p.chainId !== NETWORK || p.type !== 'eip191')
    return refusal(SIWX_ERRORS.chain, 'invalid_siwx_chain_id', `signed for ${p.chainId} (${p.type})`);
  if (p.version !== '1') return refusal(malformed, 'invalid_siwx_version', 'version must be "1"');
  if (!ADDRESS.test(p.address))
    return refusal(malformed, 'invalid_siwx_address', 'address must be a 0x-prefixed 20-byte hex address');
  if (!NONCE.test(p.nonce)) return refusal(malformed, 'invalid_siwx_nonce', 'nonce must be 8 to 128 letters or digits');

  const issuedAt = instantOf(p.issuedAt);
  if (issuedAt === null) return refusal(malformed, 'invalid_siwx_issued_at', notInstant('issuedAt'));
  if (skewOf(expect.nowMs, issuedAt) === 'ahead') {
    const reason = `issuedAt is more than ${SIGNED_REQUEST_SKEW_SEC} s ahead of server time`;
    return refusal(SIWX_ERRORS.stale, 'invalid_siwx_issued_at_in_future', reason);
  }
  if (p.expirationTime === undefined)
    return refusal(tooLong, 'invalid_siwx_expiration_time', 'expirationTime is required');
  const expires = instantOf(p.expirationTime);
  if (expires === null) return refusal(tooLong, 'invalid_siwx_expiration_time', notInstant('expirationTime'));
  const lifetime = signedLifetime({ nowMs: expect.nowMs, issuedAtMs: issuedAt, expiresAtMs: expires });
  if (lifetime === 'expired') return refusal(SIWX_ERRORS.expired, 'invalid_siwx_expired');
  if (lifetime === 'tooLong') {
    const reason = `expirationTime is more than ${SIWX_MAX_LIFETIME_SEC} s after now or after issuedAt`;
    return refusal(tooLong, 'invalid_siwx_expiration_time', reason);
  }
  if (p.notBefore !== undefined) {
    const notBefore = instantOf(p.notBefore);
    if (notBefore === null) return refusal(malformed, 'invalid_siwx_not_before', notInstant('notBefore'));
    if (expect.nowMs < notBefore) return refusal(SIWX_ERRORS.notYetValid, 'invalid_siwx_not_yet_valid');
  }
  return null;
}

type SiwxSignInDeps = {
  db: Db;
  clock: Clock;
  /** BASE_URL: the domain and uri every sign-in must name. */
  baseUrl: string;
  sanctions: SanctionsList;
  /** With RPC_URL: viem's `verifyMessage`, so smart wallets (ERC-1271, ERC-6492) sign in too. */
  verifyMessage?: EVMMessageVerifier;
  limitWallet?: (wallet: string) => void;
  /** With read nodes: a nonce is refused on every node once any node took it (db/single-use.ts). */
  crossNode?: CrossNodeUses;
};

/** The library's parser and verifier, evaluated on the first sign-in (siwx-verify.ts). */
let library: Promise<typeof import('./siwx-verify.ts')> | undefined;
const siwxLibrary = () => (library ??= import('./siwx-verify.ts'));

/** A `SIGN-IN-WITH-X` header to the wallet it proves; its (wallet, nonce) is consumed, so each header reads once. */
export function createSiwxSignIn(deps: SiwxSignInDeps) {
  const nonces = createSingleUse<{ wallet: string; nonce: string; expires_at: number; used_at: number }>(
    deps.db,
    {
      table: 'siwx_nonces',
      key: ['wallet', 'nonce'],
      columns: ['wallet', 'nonce', 'expires_at', 'used_at'],
      agedBy: { column: 'expires_at', unit: 'ms' },
    },
    deps.crossNode,
  );

  /** ECDSA first (no RPC); only a signature that does not recover goes to the chain client. */
  async function signer(p: SIWxPayload): Promise<string> {
    const { verifySIWxSignature } = await siwxLibrary();
    try {
      const local = await verifySIWxSignature(p);
      if (local.isValid) return local.payer;
      if (deps.verifyMessage) {
        const onChain = await verifySIWxSignature(p, { evmVerifier: deps.verifyMessage });
        if (onChain.isValid) return onChain.payer;
        if (onChain.invalidReason === 'invalid_siwx_verifier_error') throw siwxUnverifiable(onChain.invalidReason);
      }
      throw siwxRefused({ error: SIWX_ERRORS.signature, code: 'invalid_siwx_signature' });
    } catch (err) {
      if (err instanceof ApiError) throw err;
      // The SIWE formatter refuses fields EIP-4361 forbids (a domain with spaces, say).
      throw siwxRefused({ error: SIWX_ERRORS.malformed, code: 'invalid_siwx_message', reason: (err as Error).message });
    }
  }

  return async function signIn(header: string): Promise<string> {
    if (header.length > MAX_HEADER_CHARS)
      throw siwxRefused({ error: SIWX_ERRORS.malformed, code: 'invalid_siwx_header', reason: 'header too long' });
    const { parseSIWxHeader } = await siwxLibrary();
    let payload: SIWxPayload;
    try {
      payload = parseSIWxHeader(header.trim());
    } catch (err) {
      throw siwxRefused({ error: SIWX_ERRORS.malformed, code: 'invalid_siwx_header', reason: (err as Error).message });
    }
    const refusal = checkSiwxMessage(payload, { baseUrl: deps.baseUrl, nowMs: deps.clock.now() });
    if (refusal) throw siwxRefused(refusal);
    const wallet = (await signer(payload)).toLowerCase();
    deps.limitWallet?.(wallet);
    if (deps.sanctions.has(wallet)) throw sanctioned();
    // checkSiwxMessage made expirationTime required and parseable.
    const nowMs = deps.clock.now();
    const use = { wallet, nonce: payload.nonce, expires_at: Date.parse(payload.expirationTime!), used_at: nowMs };
    const claimed = nonces.has({ wallet, nonce: payload.nonce }) || (await nonces.claimAcross(use));
    if (!claimed || !nonces.consume(use, nowMs))
      throw siwxRefused({ error: SIWX_ERRORS.nonceUsed, code: 'invalid_siwx_nonce' });
    return wallet;
  };
}

export type SiwxSignIn = ReturnType<typeof createSiwxSignIn>;

/** Nonces whose sign-in has expired, for the retention job, on a server that sees too few sign-ins to drop them. */
export function createSiwxNoncePrune(db: Db): { run(cutoff: number, limit: number): { changes: number } } {
  return db.prepare(
    `DELETE FROM siwx_nonces WHERE (wallet, nonce) IN
      (SELECT wallet, nonce FROM siwx_nonces WHERE expires_at < ? LIMIT +?)`,
  );
}
