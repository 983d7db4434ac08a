import { z } from 'zod';
import { once } from '../lib/once.ts';
import { microToAtomic } from '../lib/money.ts';
import { authorizationJson, NETWORK, BASE_ALIASES, type Authorization } from './networks.ts';
import { paymentIdOf } from './payment-identifier.ts';
import {
  BYTES32,
  MAX_V2_HEADER_CHARS,
  decodeHeader,
  decodePayloadJson,
  decodeXPayment,
  isObject,
  payloadSchemas,
  zodRefusal,
  type DecodeResult,
  type Json,
  type AcceptedTerms,
  type PaymentPayloadV1,
  type PaymentRequirementsV1,
} from './x-payment.ts';

/** x402 v2 beside v1 (`PAYMENT-REQUIRED`, `PAYMENT-SIGNATURE`, `PAYMENT-RESPONSE`), as `@x402/core` 2.27 types them. */
export const PAYMENT_REQUIRED = 'payment-required';
export const PAYMENT_SIGNATURE = 'payment-signature';
export const PAYMENT_RESPONSE = 'payment-response';

export type V2Extensions = Record<string, unknown>;

/** `resource.description` is the route's listing (what a catalogue shows); v1 keeps the bundle's line. */
export function paymentRequiredV2(body: PaymentRequiredV1, extensions: V2Extensions, description: string | undefined) {
  return {
    x402Version: 2 as const,
    error: body.error,
    resource: resourceV2(body.accepts[0]!, description),
    accepts: body.accepts.map((a) => requirementsV2(a)),
    extensions,
  };
}

/** The one v1 -> v2 requirements mapping; the binding rides in `extra`, which v2 echoes in `accepted`. */
function requirementsV2(r: PaymentRequirementsV1, network: string = r.network) {
  return {
    scheme: r.scheme,
    network,
    amount: r.maxAmountRequired,
    asset: r.asset,
    payTo: r.payTo,
    maxTimeoutSeconds: r.maxTimeoutSeconds,
    extra: r.extra,
  };
}

/** The v2 `resource` of v1 requirements; `description` (a listing's) replaces the requirements' own. */
function resourceV2(r: PaymentRequirementsV1, description: string | undefined) {
  return { url: r.resource, description: description ?? r.description, mimeType: r.mimeType };
}

type PaymentRequiredV1 = { error: string; accepts: PaymentRequirementsV1[] };

export function encodeJsonText(json: string): string {
  return Buffer.from(json, 'utf8').toString('base64');
}

/**
 * The PaymentRequired JSON with `more` extensions spliced in, byte for byte `JSON.stringify` of the
 * merged object without re-serializing the shared Bazaar schemas; `extensions` is last, so `}}`.
 */
export function withExtensions(json: string, more: V2Extensions, own: V2Extensions): string {
  let tail = '';
  for (const [name, value] of Object.entries(more)) {
    // A name the envelope already has, or a value JSON drops, would not serialize as a splice.
    if (name in own || value === undefined)
      return JSON.stringify({ ...JSON.parse(json), extensions: { ...own, ...more } });
    tail += `,${JSON.stringify(name)}:${JSON.stringify(value)}`;
  }
  return tail === '' ? json : `${json.slice(0, -2)}${tail}}}`;
}

/** `PAYMENT-RESPONSE` and `X-PAYMENT-RESPONSE`: the same x402 SettleResponse, once per version. */
export function settleResponse(r: { transaction: string | null; payer: string }): string {
  return encodeJsonText(
    JSON.stringify({ success: true, transaction: r.transaction ?? '', network: NETWORK, payer: r.payer }),
  );
}

/** zod's walk for what the fast shape check refuses, built on first use (lib/once.ts). */
const PaymentPayloadV2 = once(() => {
  const { ExactEvmPayload, networkName } = payloadSchemas();
  const Accepted = z
    .object({
      scheme: z.literal('exact'),
      network: networkName,
      amount: z.string().max(80).optional(),
      asset: z.string().max(80).optional(),
      payTo: z.string().max(80).optional(),
      extra: z
        .object({ binding: z.object({ salt: z.string().regex(BYTES32) }).loose() })
        .loose()
        .optional(),
    })
    .loose();

  return z.object({
    x402Version: z.literal(2),
    accepted: Accepted,
    payload: ExactEvmPayload,
    extensions: z.record(z.string(), z.unknown()).optional(),
  });
});

export type PaymentHeader = { version: 1 | 2; value: string };

/** The payment header: `X-Payment` (the spec's) wins over both; HEAD never moves money. */
export function paymentHeaderOf(req: {
  method: string;
  header(name: string): string | undefined;
}): PaymentHeader | null {
  if (req.method === 'HEAD') return null;
  const v1 = req.header('x-payment');
  const v2 = req.header(PAYMENT_SIGNATURE);
  // One of each is two payments too: joined as HTTP joins a repeated header, so the flow refuses both whole.
  if (v1 && v2) return { version: 1, value: `${v1}, ${v2}` };
  if (v1) return { version: 1, value: v1 };
  return v2 ? { version: 2, value: v2 } : null;
}

/**
 * Either header as a v1 PaymentPayload; the salt is `payload.salt`, else `accepted.extra.binding.salt`.
 * `accepted` is the buyer's echo: amount, recipient and token are checked on the authorization.
 */
export function decodePaymentHeader(h: PaymentHeader): DecodeResult {
  return h.version === 1 ? decodeXPayment(h.value) : decodeHeader(h.value, PAYMENT_SIGNATURE_JSON);
}

/**
 * `"key":value` texts of our own offers that a stock client echoes byte for byte in PAYMENT-SIGNATURE
 * (JSON.stringify of what it parsed) and that no check reads: the Bazaar declaration and the
 * extensions' schemas, over half of the header and most of its JSON.parse (46 of 70 us at 6 KB).
 */
const echoes: string[] = [];

/** Called once per declaration as it is built; a few per process, so the list is capped. */
export function echoedVerbatim(key: string, value: unknown): void {
  const text = `${JSON.stringify(key)}:${JSON.stringify(value)}`;
  if (echoes.length < 8 && !echoes.includes(text)) echoes.push(text);
}

/**
 * JSON.parse with each echo found replaced by `"key":0` first. The same texts parse or fail alike:
 * an echo is one whole JSON value, and the `"key"` it starts with cannot sit inside a string (the
 * quote would close it, and the bare `key` after it is no JSON), so it is a key in both texts.
 */
function parseWithoutEchoes(text: string): unknown {
  let t = text;
  for (const echo of echoes) {
    const at = t.indexOf(echo);
    if (at >= 0) t = `${t.slice(0, at + echo.indexOf(':') + 1)}0${t.slice(at + echo.length)}`;
  }
  return JSON.parse(t);
}

const PAYMENT_SIGNATURE_JSON = { max: MAX_V2_HEADER_CHARS, decode: decodeV2Json, parse: parseWithoutEchoes };

function decodeV2Json(json: unknown): DecodeResult {
  // Most of the header is the buyer's echo of our offer: a shape check of the few fields read here
  // instead of zod's walk over all of it; anything it does not accept, or the payload refuses, is
  // decoded again by zod alone, so a refusal's reason is zod's as before.
  const fast = envelopeOf(json);
  const decoded = fast && fromEnvelope(fast);
  if (decoded?.ok) return decoded;
  const parsed = PaymentPayloadV2().safeParse(json);
  return parsed.success ? fromEnvelope(parsed.data) : zodRefusal(parsed.error);
}

type Envelope = Pick<z.infer<ReturnType<typeof PaymentPayloadV2>>, 'accepted' | 'payload' | 'extensions'>;

const shortOrAbsent = (v: unknown) => v === undefined || (typeof v === 'string' && v.length <= 80);

/**
 * The v2 envelope when `PaymentPayloadV2` would accept its `x402Version`, `accepted` and
 * `extensions`, or null. The payload is only required to be an object whose `salt` is absent or a
 * string (so `??` picks the same salt as after zod); decodePayloadJson checks the rest.
 */
function envelopeOf(json: unknown): Envelope | null {
  if (!isObject(json) || json.x402Version !== 2) return null;
  const { accepted: a, payload: p, extensions: e } = json;
  if (!isObject(a) || a.scheme !== 'exact' || typeof a.network !== 'string') return null;
  if (!BASE_ALIASES.includes(a.network)) return null;
  if (!shortOrAbsent(a.amount) || !shortOrAbsent(a.asset) || !shortOrAbsent(a.payTo)) return null;
  const x = a.extra;
  if (x !== undefined && !(isObject(x) && isObject(x.binding) && typeof x.binding.salt === 'string')) return null;
  if (x !== undefined && !BYTES32.test((x.binding as Json).salt as string)) return null;
  if (!isObject(p) || (p.salt !== undefined && typeof p.salt !== 'string')) return null;
  if (e !== undefined && !isObject(e)) return null;
  return json as unknown as Envelope;
}

function fromEnvelope({ accepted, payload, extensions }: Envelope): DecodeResult {
  const id = paymentIdOf(extensions);
  if (!id.ok) return { ok: false, reason: id.reason };
  const salt = payload.salt ?? (accepted.extra?.binding.salt as string | undefined);
  const v1: PaymentPayloadV1 = {
    x402Version: 1,
    scheme: 'exact',
    network: accepted.network,
    payload: { ...payload, ...(salt ? { salt } : {}) },
  };
  const decoded = decodePayloadJson(v1);
  if (!decoded.ok) return decoded;
  if (id.id) decoded.value.identifier = id.id;
  const { network, amount, asset, payTo } = accepted;
  decoded.value.accepted = { network, amount, asset, payTo };
  return decoded;
}

/** Why a v2 `accepted` is not this request's offer, or null: no paying one offer while claiming another. */
export function acceptedProblem(
  a: AcceptedTerms,
  offered: { priceMicro: number; asset: string; payTo: string },
): string | null {
  const amount = microToAtomic(offered.priceMicro);
  const same = (x: string | undefined, y: string) => x !== undefined && x.toLowerCase() === y.toLowerCase();
  if (a.network !== NETWORK) return `accepted.network must be ${NETWORK}`;
  if (a.amount !== amount) return `accepted.amount must be ${amount} for this bundle`;
  if (!same(a.asset, offered.asset)) return `accepted.asset must be ${offered.asset}`;
  if (!same(a.payTo, offered.payTo)) return `accepted.payTo must be ${offered.payTo}`;
  return null;
}

type SettleWire = {
  authorization: Authorization;
  signature: string;
  requirements: PaymentRequirementsV1;
  listing?: { description: string; extensions: Record<string, unknown> } | null;
};

/**
 * The `/verify` and `/settle` body in the (x402Version, scheme, network) the facilitator listed,
 * built from the verified authorization and our requirements, never the buyer's header, so
 * nothing of isocast's own (the echoed salt) reaches it. v1 is `registerV1`'s shape (requirements
 * with `maxAmountRequired`); v2 has `amount`, `accepted` and the route's Bazaar listing.
 */
export type WireKind = { x402Version: 1 | 2; scheme: 'exact'; network: string };

export function facilitatorBody(kind: WireKind, req: SettleWire): string {
  const payload = { signature: req.signature, authorization: authorizationJson(req.authorization) };
  const r = req.requirements;
  if (kind.x402Version === 1) {
    return JSON.stringify({
      x402Version: 1,
      paymentPayload: { x402Version: 1, scheme: kind.scheme, network: kind.network, payload },
      paymentRequirements: { ...r, network: kind.network },
    });
  }
  const accepted = requirementsV2(r, kind.network);
  const listing = req.listing;
  const paymentPayload = JSON.stringify({
    x402Version: 2,
    resource: resourceV2(r, listing?.description),
    accepted,
    payload,
  });
  // JSON.stringify of the whole, byte for byte, with the listing's 3.5 KB serialized once, not per settle.
  const withListing = listing
    ? `${paymentPayload.slice(0, -1)},"extensions":${listingJson(listing.extensions)}}`
    : paymentPayload;
  return `{"x402Version":2,"paymentPayload":${withListing},"paymentRequirements":${JSON.stringify(accepted)}}`;
}

const listingTexts = new WeakMap<object, string>();
function listingJson(extensions: Record<string, unknown>): string {
  let text = listingTexts.get(extensions);
  if (text === undefined) {
    text = JSON.stringify(extensions);
    listingTexts.set(extensions, text);
  }
  return text;
}
