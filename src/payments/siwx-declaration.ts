import type { SIWxExtension } from '@x402/extensions/sign-in-with-x';
import { NETWORK } from '../x402/networks.ts';

/**
 * What `declareSIWxExtension({ network: NETWORK, expirationSeconds })` of `@x402/extensions`
 * returns under `sign-in-with-x`, less its internal `_options`, written out: importing the
 * library for this one constant evaluated its SIWE parser, tweetnacl and two copies of zod 3 at
 * every start (siwx-verify.ts). test/payments/siwx.test.ts compares it, key order included, with
 * the library's own output, so an upgrade that changes the declaration fails there.
 */
export const SIGN_IN_WITH_X = 'sign-in-with-x';

const text = { type: 'string' } as const;
const uri = { type: 'string', format: 'uri' } as const;
const instant = { type: 'string', format: 'date-time' } as const;

export const SIWX_DECLARATION: SIWxExtension = {
  info: { version: '1' },
  supportedChains: [{ chainId: NETWORK, type: 'eip191' }],
  schema: {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    properties: {
      domain: text,
      address: text,
      statement: text,
      uri,
      version: text,
      chainId: text,
      type: text,
      nonce: text,
      issuedAt: instant,
      expirationTime: instant,
      notBefore: instant,
      requestId: text,
      resources: { type: 'array', items: uri },
      signature: text,
    },
    required: ['domain', 'address', 'uri', 'version', 'chainId', 'type', 'nonce', 'issuedAt', 'signature'],
  },
} as SIWxExtension;
