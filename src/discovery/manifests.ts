import type { RouteDoc } from '../lib/route-doc.ts';
import { SECURITY_SCHEMES } from './openapi.ts';
import { NETWORK } from '../x402/networks.ts';
import { SALT_ECHO } from '../../packages/isocast-client/src/binding.ts';
import { receiptTypedDataDoc } from '../payments/receipt-request.ts';
import { originOf, type ReceiptSignedKind } from '../../packages/isocast-client/src/receipt-typed-data.ts';
import {
  acceptsFor,
  DEFAULT_BUNDLE,
  access,
  isPaid,
  numbered,
  type Offer,
  SERVICE_NAME,
  SERVICE_SUMMARY,
} from './offer.ts';

/** The JSON discovery documents, plain objects; the router adds `disclaimer`. */
export const DOCUMENT_PATHS = {
  openapi: '/openapi.json',
  api: '/api',
  llms: '/llms.txt',
  llmsFull: '/llms-full.txt',
  llmsWeatherSignals: '/llms/weather-signals',
  discovery: '/discovery',
  x402: '/.well-known/x402',
  agentCard: '/.well-known/agent-card.json',
  terms: '/terms.txt',
  robots: '/robots.txt',
  sitemap: '/sitemap.xml',
} as const;

export function discoveryIndex(o: Offer) {
  const price = { from: o.from.price, per: 'bundle of count signals for one city', defaultCount: DEFAULT_BUNDLE };
  return {
    service: SERVICE_NAME,
    description: SERVICE_SUMMARY,
    apiVersion: o.apiVersion,
    baseUrl: o.baseUrl,
    paymentMode: o.paymentMode,
    documents: Object.fromEntries(Object.entries(DOCUMENT_PATHS).map(([k, p]) => [k, o.url(p)])),
    resources: o.docs.map((doc) => ({
      method: doc.method.toUpperCase(),
      path: doc.path,
      url: o.url(doc.path),
      summary: doc.summary,
      tags: doc.tags,
      access: access(doc),
      ...(isPaid(doc) ? { price } : {}),
    })),
    pricing: o.pricing,
    payment: {
      protocol: 'x402',
      x402Version: 1,
      scheme: 'exact',
      network: NETWORK,
      asset: o.usdc,
      payTo: o.payTo,
      header: 'X-Payment',
      receipt: { header: 'Authorization', scheme: 'Bearer', bearerFormat: SECURITY_SCHEMES.receipt.bearerFormat },
      steps: o.steps,
      reading: o.reading,
      saltEcho: SALT_ECHO,
      receiptRecovery: receiptRecovery(o),
    },
    cities: streamList(o, o.high, '/v1/cities'),
    lowStreams: streamList(o, o.low, '/v1/cities?kind=low'),
    terms: o.termsUrl,
    license: 'Signals are licensed for your own use; resale and redistribution are not permitted.',
  };
}

function streamList(o: Offer, served: Offer['cities'], list: string) {
  return { count: served.length, list: o.url(list), slugs: served.map((c) => c.slug) };
}

/** What a paid route's listing says of its query: the instructions' line and the manifest item's fields. */
function paidQuery(doc: RouteDoc) {
  return doc.path === '/v1/subscribe'
    ? {
        line: '?city=<slug>&count=<n>: buys a bundle of n signals for one city and answers a receipt token',
        fields: { city: 'city slug (required)', count: `bundle size, integer >= 2 (required)` },
      }
    : {
        line: '?city=<slug>&since=<cursor>: reads the signals a receipt token (or the paying wallet, signed in) is entitled to; with no entitlement left it answers the 402 that buys the next bundle (count=<n>)',
        fields: {
          city: 'city slug (required)',
          since: 'cursor, default 0',
          count: `bundle size proposed in a 402, default ${DEFAULT_BUNDLE}`,
        },
      };
}

/** The manifest's `instructions`: the Markdown x402scan and agentcash show an agent. */
function manifestInstructions(o: Offer): string {
  const tiers = o.tiers.map((t) => `${t.minCount}+ at $${t.unitPriceUsd}`).join(', ');
  return [
    `# ${SERVICE_NAME}: how to pay and read`,
    SERVICE_SUMMARY,
    `Payment: x402 exact scheme, USDC (${o.usdc}) on Base (${NETWORK}), to ${o.payTo ?? 'the payTo of each 402'}.${o.paymentMode === 'mock' ? ' This instance runs in mock mode: a demo, no money moves.' : ''}`,
    '## Paid resources',
    o.paid
      .map(
        (doc) =>
          `- ${doc.method.toUpperCase()} ${o.url(doc.path)}${paidQuery(doc).line}. Price: count x the unit price of its tier (${tiers}), from ${o.from.price} for ${o.from.minCount}.`,
      )
      .join('\n'),
    '## Pay',
    numbered(o.steps),
    '## Read again (no new payment)',
    numbered(o.reading),
    'An agent with an MCP host can do all of this as tools: the MCP server isocast-mcp of the npm package @isocast/client (or `isocast mcp`), with a daily spending cap.',
    `Full guide: ${o.url(DOCUMENT_PATHS.llms)}. OpenAPI: ${o.url(DOCUMENT_PATHS.openapi)}.`,
  ].join('\n\n');
}

/** The x402 manifest as x402scan and agentcash read it, plus `items` in the shape of an x402 discovery listing. */
export function x402Manifest(o: Offer) {
  return {
    version: 1,
    x402Version: 1,
    service: SERVICE_NAME,
    description: SERVICE_SUMMARY,
    // mock: a demo whose payments move no money; indexers and wallets must not list it as a seller.
    mode: o.paymentMode,
    resources: o.paid.map((doc) => o.url(doc.path)),
    items: o.paid.map((doc) => ({
      resource: o.url(doc.path),
      type: 'http',
      method: doc.method.toUpperCase(),
      x402Version: 1,
      description: doc.summary,
      query: paidQuery(doc).fields,
      price: {
        from: o.from.price,
        currency: 'USDC',
        tiers: o.tiers.map(({ name, minCount, unitPriceUsd }) => ({ name, minCount, unitPriceUsd })),
        rule: o.pricing.rule,
      },
      accepts: acceptsFor(o, doc.path),
      nonceBinding:
        'required: the EIP-3009 nonce must be keccak256(abi.encodePacked(payer, citySlug, uint256 count, bytes32 salt)) with the salt from the 402 challenge, echoed back as payload.salt',
      saltEcho: SALT_ECHO,
    })),
    receiptRecovery: receiptRecovery(o),
    instructions: manifestInstructions(o),
    llms: o.url(DOCUMENT_PATHS.llms),
    openapi: o.url(DOCUMENT_PATHS.openapi),
  };
}

/** POST /v1/receipts: a new receipt token for a wallet signature (replays never return one). */
function receiptRecovery(o: Offer) {
  const signed = (path: string, kind?: ReceiptSignedKind) => ({
    method: 'POST',
    url: o.url(path),
    body: '{wallet, origin, timestamp, signature}',
    typedData: receiptTypedDataDoc(originOf(o.baseUrl), kind),
  });
  return {
    ...signed('/v1/receipts'),
    revoke: signed('/v1/receipts/revoke', 'ReceiptRevocation'),
    note: `A receipt token is issued once, with the purchase that moved the money; an idempotent replay answers without one. Tokens expire (RECEIPT_TTL_DAYS); a wallet revokes all of its tokens with one ReceiptRevocation signature. Every signature names this server's origin (${originOf(o.baseUrl)}); each signed (wallet, timestamp) works once, within 600 s of server time.`,
  };
}

export function agentCard(o: Offer) {
  return {
    protocolVersion: '0.3.0',
    name: SERVICE_NAME,
    description:
      `${SERVICE_SUMMARY} One signal per bucket crossing of a city's observed daily high, with live odds for every bucket. ` +
      `${o.high.length} cities (and ${o.low.length} daily-low streams, GET /v1/cities?kind=low). Free: cities, a sample signal, prices. Paid: bundles bought with x402, read with a receipt token. ` +
      `This agent speaks plain HTTP+JSON; the OpenAPI document is at ${o.url(DOCUMENT_PATHS.openapi)}.`,
    url: o.baseUrl,
    preferredTransport: 'HTTP+JSON',
    version: o.apiVersion,
    provider: { organization: `${SERVICE_NAME} operator`, url: o.baseUrl },
    documentationUrl: o.url(DOCUMENT_PATHS.api),
    capabilities: {
      streaming: false,
      pushNotifications: false,
      stateTransitionHistory: false,
      extensions: [
        {
          uri: 'https://github.com/google-a2a/a2a-x402/v0.1',
          description: `Paid skills require an x402 payment (exact scheme, USDC on ${NETWORK}) whose EIP-3009 nonce binds payer, city and count.`,
          required: true,
          params: { x402Version: 1, accepts: acceptsFor(o, '/v1/subscribe'), steps: o.steps },
        },
      ],
    },
    securitySchemes: SECURITY_SCHEMES,
    security: [{ x402: [] }, { receipt: [] }],
    defaultInputModes: ['application/json'],
    defaultOutputModes: ['application/json'],
    skills: [
      {
        id: 'buy-weather-signals',
        name: 'Buy a bundle of weather-market signals',
        description: `POST ${o.url('/v1/subscribe')}?city=<slug>&count=<n> paid with x402; returns a receipt token and the new entitlement ceiling.`,
        tags: ['x402', 'payments', 'prediction-markets', 'weather'],
        examples: ['Buy 20 signals for nyc', 'POST /v1/subscribe?city=london&count=100 with X-Payment'],
      },
      {
        id: 'read-weather-signals',
        name: 'Read entitled signals',
        description: `GET ${o.url('/v1/signals')}?city=<slug>&since=<cursor> with Authorization: Bearer <receipt token>; pages of at most 100, ascending seq.`,
        tags: ['signals', 'prediction-markets', 'temperature'],
        examples: ['New signals for nyc since seq 12', 'GET /v1/signals?city=nyc&since=0'],
      },
      {
        id: 'list-cities',
        name: 'List covered cities',
        description: `GET ${o.url('/v1/cities')}: the ${o.high.length} daily-high cities (?kind=low: the ${o.low.length} daily-low streams) with unit, bucket width, timezone and latest seq. Free.`,
        tags: ['cities', 'free'],
        examples: ['Which cities are covered?'],
      },
      {
        id: 'sample-and-prices',
        name: 'Sample signal and prices',
        description: `GET ${o.url('/v1/sample')} for a free example signal, ${o.url('/v1/signals/meta')} for tiers and the settlement wallet.`,
        tags: ['pricing', 'free'],
        examples: ['What does a signal look like?', 'How much do 100 signals cost?'],
      },
      {
        id: 'recover-receipt',
        name: 'Recover a receipt token',
        description: `POST ${o.url('/v1/receipts')} with an EIP-712 ReceiptRequest signature {wallet, origin, timestamp} gets a new receipt token for every city the wallet bought. Free.`,
        tags: ['payments', 'free'],
        examples: ['I lost my receipt token for wallet 0x...'],
      },
      {
        id: 'chat-delivery',
        name: 'Push signals to a chat',
        description: `POST ${o.url('/v1/delivery/messenger')} with an EIP-712 wallet signature registers the chat that receives entitled signals. Free; never charges.`,
        tags: ['delivery', 'free'],
        examples: ['Send my nyc signals to chat 123456'],
      },
    ],
  };
}
