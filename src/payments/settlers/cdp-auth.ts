import { randomBytes } from 'node:crypto';
import { SignJWT } from 'jose';
import { CDP_JWT_LIFETIME_S, cdpSigningKey } from './cdp-key.ts';
import type { PerRequestHeaders } from '../../lib/http-client.ts';

/** CDP's per-request JWT, signed with jose: an `Authorization: Bearer <jwt>` for each request's method, host and path. */
export function cdpJwtHeaders(opts: { keyId: string; secret: string; now?: () => number }): PerRequestHeaders {
  const { key, alg } = cdpSigningKey(opts.secret);
  return async (method, host, path) => {
    const now = Math.floor((opts.now?.() ?? Date.now()) / 1000);
    const jwt = await new SignJWT({ uris: [`${method} ${host}${path}`] })
      .setProtectedHeader({ alg, kid: opts.keyId, typ: 'JWT', nonce: randomBytes(16).toString('hex') })
      .setIssuer('cdp')
      .setSubject(opts.keyId)
      .setAudience(['cdp_service'])
      .setIssuedAt(now)
      .setNotBefore(now)
      .setExpirationTime(now + CDP_JWT_LIFETIME_S)
      .sign(key);
    return { authorization: `Bearer ${jwt}` };
  };
}
