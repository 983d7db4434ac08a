import { built, type RouteDoc } from '../lib/route-doc.ts';
import { toOpenApiSchema, type Components, type JsonSchema } from '../lib/json-schema.ts';
import { signalSchema } from '../signals/schemas.ts';
import { type Offer, paymentInfo } from './offer.ts';

/** The OpenAPI 3.1 document from the routers' RouteDoc lists; no root field but OpenAPI's: `x-disclaimer`. */

export const SECURITY_SCHEMES = {
  x402: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Payment',
    description:
      'x402 v1 payment: base64 of the PaymentPayload JSON for the `exact` scheme on eip155:8453 (an EIP-3009 ' +
      'TransferWithAuthorization for USDC). The authorization nonce must be keccak256(abi.encodePacked(payer, citySlug, ' +
      'uint256 count, bytes32 salt)) with the salt served in the 402 challenge (`accepts[].extra.binding.salt`).',
  },
  x402v2: {
    type: 'apiKey',
    in: 'header',
    name: 'PAYMENT-SIGNATURE',
    description:
      'x402 v2 payment: base64 of the v2 PaymentPayload JSON ({x402Version: 2, accepted, payload}) answering the ' +
      'PAYMENT-REQUIRED header of the 402; `accepted` echoes the requirements, `extra.binding` included, and `payload` ' +
      'is the same signed EIP-3009 authorization with the bound nonce as for X-Payment. X-Payment wins if both are sent.',
  },
  siwx: {
    type: 'apiKey',
    in: 'header',
    name: 'SIGN-IN-WITH-X',
    description:
      "x402 v2 sign-in-with-x (GET /v1/signals): base64 JSON of the SIWE payload answering the 402's PAYMENT-REQUIRED " +
      "extensions['sign-in-with-x'], signed (EIP-191; ERC-1271/ERC-6492 smart wallets in live mode) by the wallet that paid. Reads its " +
      "entitled signals without a token or a payment; domain and uri name this server's BASE_URL; each (wallet, nonce) once.",
  },
  receipt: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'isocast-receipt',
    description:
      'The opaque `receiptToken` a successful subscribe returned; reads for the paying wallet without paying again.',
  },
  admin: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'isocast-admin',
    description:
      'The operator token (ADMIN_TOKEN). Operator routes only (/admin/data.json, /metrics); without ADMIN_TOKEN configured they answer 404.',
  },
} as const;

const TAGS: Record<string, string> = {
  service: 'Liveness and mode',
  cities: 'The covered cities and their market days',
  signals: 'Bucket-crossing signals, samples and prices',
  payments: 'Buying bundles over x402',
  delivery: 'Chat delivery registration (free, wallet-signed)',
  terms: 'Terms of use',
  operations: 'For the operator',
  discovery: 'Machine- and human-readable descriptions of this service',
};

function parameters(where: 'query' | 'path', given: RouteDoc['query'], components: Components): JsonSchema[] {
  if (!given) return [];
  const obj = toOpenApiSchema(built(given), 'input', components);
  const props = (obj.properties ?? {}) as Record<string, JsonSchema>;
  return Object.entries(props).map(([name, prop]) => {
    const { description, ...rest } = prop;
    return {
      name,
      in: where,
      required: where === 'path' || ((obj.required ?? []) as string[]).includes(name),
      ...(typeof description === 'string' ? { description } : {}),
      schema: rest,
    };
  });
}

const header = (description: string) => ({ description, schema: { type: 'string' } });

function responses(doc: RouteDoc, components: Components): Record<string, JsonSchema> {
  const out: Record<string, JsonSchema> = {};
  for (const [status, r] of Object.entries(doc.responses)) {
    const contentType = r.contentType ?? 'application/json';
    const schema = r.schema ? toOpenApiSchema(built(r.schema), 'output', components) : { type: 'string' };
    const headers = r.headers && Object.fromEntries(Object.entries(r.headers).map(([h, d]) => [h, header(d)]));
    out[status] = {
      description: r.description,
      ...(headers ? { headers } : {}),
      content: { [contentType]: { schema } },
    };
  }
  return out;
}

function operation(doc: RouteDoc, components: Components, o: Offer): JsonSchema {
  const payment = paymentInfo(o, doc);
  const params = [...parameters('path', doc.params, components), ...parameters('query', doc.query, components)];
  const body = doc.body && toOpenApiSchema(built(doc.body), 'input', components);
  const words = doc.path.split(/[^A-Za-z0-9]+/).filter(Boolean);
  return {
    operationId: doc.method + words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join(''),
    summary: doc.summary,
    ...(doc.description ? { description: doc.description } : {}),
    tags: doc.tags,
    ...(params.length ? { parameters: params } : {}),
    ...(body ? { requestBody: { required: true, content: { 'application/json': { schema: body } } } } : {}),
    // An empty list says "free" explicitly, so tools never assume a global requirement.
    security: (doc.security ?? []).map((alternative) => Object.fromEntries(alternative.map((name) => [name, []]))),
    ...(payment ? { 'x-payment-info': payment } : {}),
    responses: responses(doc, components),
  };
}

export function buildOpenApi(o: Offer): JsonSchema {
  const components: Components = new Map();
  // The signal is a component even where no route's schema names it.
  toOpenApiSchema(signalSchema(), 'output', components);
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const doc of o.docs) paths[doc.path] = { ...paths[doc.path], [doc.method]: operation(doc, components, o) };
  return {
    openapi: '3.1.0',
    info: {
      title: 'isocast',
      version: o.apiVersion,
      summary: 'Bucket-crossing signals on daily-high temperature prediction markets, sold per bundle over x402',
      description:
        "isocast emits exactly one signal each time a city's observed daily-high temperature crosses into a new " +
        'market bucket, with live odds for every bucket. Signals are sold as prepaid per-city bundles paid with x402 ' +
        '(USDC EIP-3009 authorizations on Base, eip155:8453); read them with the receipt token. Guides: ' +
        `${o.baseUrl}/llms.txt and ${o.baseUrl}/api.\n\n${o.disclaimer}`,
      termsOfService: o.termsUrl,
      license: { name: "Signals licensed for the buyer's own use; no resale or redistribution", url: o.termsUrl },
    },
    servers: [{ url: o.baseUrl }],
    tags: Object.entries(TAGS).map(([name, description]) => ({ name, description })),
    paths,
    components: {
      schemas: Object.fromEntries([...components].sort(([a], [b]) => a.localeCompare(b))),
      securitySchemes: SECURITY_SCHEMES,
    },
    'x-disclaimer': o.disclaimer,
  };
}
