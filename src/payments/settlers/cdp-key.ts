import { createPrivateKey, type KeyObject } from 'node:crypto';

/** The CDP API key (base64 Ed25519 or EC P-256 PEM) read without jose: config.ts checks it at start in every mode. */
export const CDP_FACILITATOR_URL = 'https://api.cdp.coinbase.com/platform/v2/x402';
export const CDP_JWT_LIFETIME_S = 120;

/** Throws with a message fit for a `config:` line when the secret is neither kind of key. */
export function cdpSigningKey(secret: string): { key: KeyObject; alg: 'EdDSA' | 'ES256' } {
  // A PEM pasted into one environment line arrives with literal "\n".
  const text = secret.trim().replace(/\\n/g, '\n');
  if (text.startsWith('-----BEGIN')) {
    let key: KeyObject;
    try {
      key = createPrivateKey(text);
    } catch (err) {
      throw new Error(`not a readable PEM private key (${(err as Error).message})`);
    }
    if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1')
      throw new Error('a PEM key must be an EC P-256 key (ES256)');
    return { key, alg: 'ES256' };
  }
  const raw = /^[A-Za-z0-9+/]+={0,2}$/.test(text) ? Buffer.from(text, 'base64') : Buffer.alloc(0);
  if (raw.length !== 64)
    throw new Error('must be an Ed25519 key (base64 of 64 bytes) or an EC P-256 key in PEM, as the CDP portal issues');
  const jwk = {
    kty: 'OKP',
    crv: 'Ed25519',
    d: raw.subarray(0, 32).toString('base64url'),
    x: raw.subarray(32).toString('base64url'),
  };
  try {
    return { key: createPrivateKey({ key: jwk, format: 'jwk' }), alg: 'EdDSA' };
  } catch (err) {
    throw new Error(`not a usable Ed25519 key (${(err as Error).message})`);
  }
}
