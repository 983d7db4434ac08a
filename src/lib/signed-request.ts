import { z } from 'zod';
import { fieldRequired, invalidField, signatureVerificationFailed, staleTimestamp } from './api-errors.ts';
import type { ApiError } from './errors.ts';

/** The clock rule every signed request shares (spec 8): a clock one accepts, all accept. */
export const SIGNED_REQUEST_SKEW_SEC = 600;
const SKEW_MS = SIGNED_REQUEST_SKEW_SEC * 1000;

/** The rule as a schema's description and a refusal's reason say it. */
export const SKEW_RULE = `within ${SIGNED_REQUEST_SKEW_SEC} s of server time`;

/** `ahead` or `behind` by more than the skew, or null inside it (exactly the skew is inside). */
export function skewOf(nowMs: number, signedMs: number): 'ahead' | 'behind' | null {
  if (signedMs - nowMs > SKEW_MS) return 'ahead';
  if (nowMs - signedMs > SKEW_MS) return 'behind';
  return null;
}

/** A sign-in's lifetime: at most one skew after now and after issue, so a copy is worth no more than a timestamp. */
export function signedLifetime(r: {
  nowMs: number;
  issuedAtMs: number;
  expiresAtMs: number;
}): 'expired' | 'tooLong' | null {
  if (r.expiresAtMs <= r.nowMs) return 'expired';
  // Without the bound from issuedAt, a request made to last a day would be refused until its last ten minutes.
  if (r.expiresAtMs - r.nowMs > SKEW_MS || r.expiresAtMs - r.issuedAtMs > SKEW_MS) return 'tooLong';
  return null;
}

/** The spec's order: the clock first (no recovery for a stale body), then the signature. */
export async function checkSignedRequest(r: {
  nowMs: number;
  timestamp: number;
  verify: () => Promise<boolean>;
  refusedFor?: () => string | undefined;
}): Promise<void> {
  // The server clock is truncated to the unit signed (whole seconds).
  if (skewOf(Math.floor(r.nowMs / 1000) * 1000, r.timestamp * 1000) !== null) throw staleTimestamp();
  if (!(await r.verify())) throw signatureVerificationFailed(r.refusedFor?.());
}

/** Uses older than twice the skew go: a server clock stepped back by less than the skew still refuses a copy. */
export function singleUseCutoff(nowMs: number, unit: 's' | 'ms'): number {
  const cutoffMs = nowMs - 2 * SKEW_MS;
  return unit === 'ms' ? cutoffMs : Math.floor(cutoffMs / 1000);
}

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
  for (const field of fields) if (body[field] === undefined || body[field] === null) throw fieldRequired(field);
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
