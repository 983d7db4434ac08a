/** The `payment-identifier` extension (docs/payments.md), @x402/extensions' written out: importing it costs 200 ms. */
import { createHash, createHmac, type KeyObject } from 'node:crypto';
import { isValidPaymentId, PAYMENT_IDENTIFIER } from '../../packages/isocast-client/src/payment-id.ts';
import type { Authorization } from './networks.ts';

const PAYMENT_ID_MIN_LENGTH = 16;
const PAYMENT_ID_MAX_LENGTH = 128;

export const PAYMENT_ID_RULE = `${PAYMENT_ID_MIN_LENGTH}-${PAYMENT_ID_MAX_LENGTH} characters of A-Z, a-z, 0-9, "-" and "_"`;

/** What the 402 declares: the id is optional (a v1 buyer, or a v2 one without the extension, pays as before). */
export function paymentIdentifierDeclaration() {
  return {
    info: { required: false },
    schema: {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: {
        required: { type: 'boolean' },
        id: {
          type: 'string',
          minLength: PAYMENT_ID_MIN_LENGTH,
          maxLength: PAYMENT_ID_MAX_LENGTH,
          pattern: '^[a-zA-Z0-9_-]+$',
        },
      },
      required: ['required'],
    },
  };
}

type PaymentIdResult = { ok: true; id: string | null } | { ok: false; reason: string };

/** A bad id is refused, not ignored: a buyer must never believe a retry is protected when it is not. */
export function paymentIdOf(extensions: Record<string, unknown> | undefined): PaymentIdResult {
  const ext = extensions?.[PAYMENT_IDENTIFIER];
  if (ext === undefined || ext === null) return { ok: true, id: null };
  const info = typeof ext === 'object' ? (ext as { info?: unknown }).info : undefined;
  if (!info || typeof info !== 'object') return { ok: false, reason: `extensions.${PAYMENT_IDENTIFIER}.info missing` };
  const id = (info as { id?: unknown }).id;
  if (id === undefined) return { ok: true, id: null };
  if (!isValidPaymentId(id))
    return { ok: false, reason: `extensions.${PAYMENT_IDENTIFIER}.info.id must be ${PAYMENT_ID_RULE}` };
  return { ok: true, id };
}

/** A keyed hash of the id, so a copy of the database (a backup, the replica) holds no id to replay with. */
export function identifierKey(secret: KeyObject, id: string): string {
  return createHmac('sha256', secret).update('isocast payment identifier v1\0').update(id).digest('base64url');
}

/** The stored answer's AEAD context (not stored): it never opens for the public fields with a forged signature. */
export function signedPaymentDigest(p: { authorization: Authorization; signature: string }): string {
  const a = p.authorization;
  return createHash('sha256')
    .update([a.from, a.to, a.value, a.validAfter, a.validBefore, a.nonce, p.signature].join('|').toLowerCase())
    .digest('base64url');
}
