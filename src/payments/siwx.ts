import type { SIWxExtension, SIWxPayload } from '@x402/extensions/sign-in-with-x';
import { ERRORS } from '../lib/api-errors.ts';
import { SIGNED_REQUEST_SKEW_SEC, signedLifetime, skewOf } from '../lib/signed-request.ts';
import { once } from '../lib/once.ts';
import { NETWORK } from '../x402/networks.ts';
import { echoedVerbatim } from '../x402/v2.ts';

/**
 * `sign-in-with-x`: the 402's declaration and the message checks needing no signature or database. Not the library's
 * `validateSIWxMessage`: it reads `Date.now()`, allows no skew on `issuedAt` and no `expirationTime` for ever.
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
