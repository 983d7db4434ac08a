import { z } from 'zod';
import type { ApiError } from './errors.ts';
import { fieldRequired, invalidField } from './api-errors.ts';
import { SKEW_RULE } from './signed-request.ts';

/** The fields every signed body carries, their schemas and 400 messages, written once. */
export const signedWallet = () => z.string().regex(/^0x[0-9a-fA-F]{40}$/);
export const signedSignature = () => z.string().regex(/^0x[0-9a-fA-F]+$/);
export const signedTimestamp = () => z.number().int().nonnegative().describe(`Unix seconds; ${SKEW_RULE}`);

const SIGNED_FIELD_MESSAGES = {
  wallet: 'invalid wallet: must be a 0x-prefixed 20-byte hex address',
  timestamp: 'invalid timestamp: must be an integer number of unix seconds',
  signature: 'invalid signature: must be a 0x-prefixed hex string',
} as const;

/** 400 `<field> required` for the first of `fields`, in that order, that is absent or null. */
export function requireFields(body: Record<string, unknown>, fields: readonly string[]): void {
  for (const field of fields) {
    if (body[field] === undefined || body[field] === null) throw fieldRequired(field);
  }
}

/** The 400 for a refused body: the first field in `order` with an issue, else `fallback`. */
export function invalidSignedBody(
  error: z.ZodError,
  r: { order: readonly string[]; messages?: Record<string, string>; fallback: string },
): ApiError {
  const fields = new Set(error.issues.map((i) => String(i.path[0] ?? '')));
  const messages: Record<string, string> = { ...SIGNED_FIELD_MESSAGES, ...r.messages };
  const first = r.order.find((f) => fields.has(f) && messages[f] !== undefined);
  return invalidField(first ? messages[first]! : r.fallback);
}
