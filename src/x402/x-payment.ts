import { z } from 'zod';
import { once } from '../lib/once.ts';
import type { Address, Hex } from 'viem';
import { NETWORK, BASE_ALIASES, type Authorization } from './networks.ts';

export const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const UINT = /^(0|[1-9][0-9]{0,77})$/;
export const BYTES32 = /^0x[0-9a-fA-F]{64}$/;
const SIGNATURE = /^0x([0-9a-fA-F]{2})+$/;
/** zod's shapes, for the slow path and its refusal reasons only: built on first use (lib/once.ts). */
export const payloadSchemas = once(() => {
  const addressStr = z.string().regex(ADDRESS);
  const uintStr = z.string().regex(UINT, 'must be a decimal integer string');
  const bytes32 = z.string().regex(BYTES32);

  const ExactEvmPayload = z.object({
    signature: z.string().regex(SIGNATURE),
    /** isocast's: the challenge's `extra.binding.salt`, echoed (never sent to a facilitator). */
    salt: bytes32.optional(),
    authorization: z.object({
      from: addressStr,
      to: addressStr,
      value: uintStr,
      validAfter: uintStr,
      validBefore: uintStr,
      nonce: bytes32,
    }),
  });

  const networkName = z.string().refine((n) => BASE_ALIASES.includes(n), `network must be ${NETWORK}`);

  const PaymentPayloadV1 = z.object({
    x402Version: z.literal(1),
    scheme: z.literal('exact'),
    network: networkName,
    payload: ExactEvmPayload,
  });

  return { ExactEvmPayload, networkName, PaymentPayloadV1 };
});

export type PaymentPayloadV1 = z.infer<ReturnType<typeof payloadSchemas>['PaymentPayloadV1']>;

/** Standard x402 v1 PaymentRequirements, as a 402 offers them and a facilitator is sent them. */
export type PaymentRequirementsV1 = {
  scheme: 'exact';
  network: string;
  maxAmountRequired: string;
  resource: string;
  description: string;
  mimeType: string;
  payTo: string;
  maxTimeoutSeconds: number;
  asset: string;
  extra: Record<string, unknown>;
};

/** A header longer than this is not a payment we could have asked for. */
export const MAX_HEADER_CHARS = 8_192;
/** PAYMENT-SIGNATURE echoes every declared extension, so it is longer; Node's 16 KiB header cap (431) applies first. */
export const MAX_V2_HEADER_CHARS = 14_336;

export type DecodedPayment = {
  /** The network it names (either spelling): the facilitator's requirements repeat it. */
  network: string;
  salt: Hex | null;
  authorization: Authorization;
  signature: Hex;
  /** A v2 payment's `payment-identifier` id (payment-identifier.ts): its idempotency key. */
  identifier?: string;
  /** A v2 payment's `accepted`: the requirement the client says it pays (v2.ts acceptedProblem). */
  accepted?: AcceptedTerms;
};

/** What a v2 `accepted` names about the price: checked against what the request offers. */
export type AcceptedTerms = { network: string; amount?: string; asset?: string; payTo?: string };

export type DecodeResult = { ok: true; value: DecodedPayment } | { ok: false; reason: string };

/**
 * Strict base64 (either alphabet, padding optional): Node's decoder would read `A, B` (two headers
 * joined) as A alone. It skips what is not base64 and stops at `=`, so junk or padding in the
 * middle shows as fewer bytes than the length promises (a regex over the header cost 13 us at 8 KB).
 */
function strictBase64(value: string): Buffer {
  const s = value.trim();
  let n = s.length;
  if (n > 0 && s.charCodeAt(n - 1) === 61) n--;
  if (n > 0 && s.charCodeAt(n - 1) === 61) n--;
  if (n === s.length ? n % 4 === 1 : s.length % 4 !== 0) throw new Error('not strict base64');
  const bytes = Buffer.from(s, 'base64');
  if (bytes.length !== Math.floor((n * 3) / 4)) throw new Error('not strict base64');
  return bytes;
}

/** Either header's base64 JSON to `decode` (no closure per request); `parse` accepts exactly what JSON.parse does. */
export function decodeHeader(
  value: string,
  how: { max: number; decode: (json: unknown) => DecodeResult; parse?: (text: string) => unknown },
): DecodeResult {
  if (value.length > how.max) return { ok: false, reason: 'header too long' };
  let json: unknown;
  try {
    json = (how.parse ?? JSON.parse)(strictBase64(value).toString('utf8'));
  } catch {
    return { ok: false, reason: 'not base64-encoded JSON' };
  }
  return how.decode(json);
}

const X_PAYMENT = { max: MAX_HEADER_CHARS, decode: decodePayloadJson };
export const decodeXPayment = (header: string): DecodeResult => decodeHeader(header, X_PAYMENT);

export function zodRefusal(error: z.ZodError): DecodeResult {
  const issue = error.issues[0]!;
  return { ok: false, reason: `${issue.path.join('.') || 'payload'}: ${issue.message}` };
}

export type Json = Record<string, unknown>;
export const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const is = (v: unknown, re: RegExp): v is string => typeof v === 'string' && re.test(v);

/** Whether `PaymentPayloadV1` accepts `json`: zod only words a refusal (its walk was 3 % of a paid request's CPU). */
function wellFormed(json: unknown): json is PaymentPayloadV1 {
  if (!isObject(json) || json.x402Version !== 1 || json.scheme !== 'exact') return false;
  const { network, payload: p } = json;
  if (typeof network !== 'string' || !BASE_ALIASES.includes(network)) return false;
  if (!isObject(p) || !is(p.signature, SIGNATURE) || (p.salt !== undefined && !is(p.salt, BYTES32))) return false;
  const a = p.authorization;
  if (!isObject(a) || !is(a.from, ADDRESS) || !is(a.to, ADDRESS) || !is(a.nonce, BYTES32)) return false;
  return is(a.value, UINT) && is(a.validAfter, UINT) && is(a.validBefore, UINT);
}

/** A parsed x402 v1 PaymentPayload object (from X-Payment, or a PAYMENT-SIGNATURE made v1 by v2.ts). */
export function decodePayloadJson(json: unknown): DecodeResult {
  let data: PaymentPayloadV1;
  if (wellFormed(json)) data = json;
  else {
    const parsed = payloadSchemas().PaymentPayloadV1.safeParse(json);
    if (!parsed.success) return zodRefusal(parsed.error);
    data = parsed.data;
  }
  const { authorization: a, salt, signature } = data.payload;
  return {
    ok: true,
    value: {
      network: data.network,
      salt: salt ? (salt.toLowerCase() as Hex) : null,
      signature: signature as Hex,
      authorization: {
        from: a.from as Address,
        to: a.to as Address,
        value: BigInt(a.value),
        validAfter: BigInt(a.validAfter),
        validBefore: BigInt(a.validBefore),
        nonce: a.nonce.toLowerCase() as Hex,
      },
    },
  };
}
