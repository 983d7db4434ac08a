import type { RouteDoc } from '../lib/route-doc.ts';
import { SECURITY_SCHEMES } from './openapi.ts';
import { NETWORK } from '../x402/networks.ts';
import { SALT_ECHO } from '../../packages/isocast-client/src/binding.ts';
import { originOf, type ReceiptSignedKind, receiptTypedDataDoc } from '../payments/receipt-request.ts';
import {
  acceptsFor,
  DEFAULT_BUNDLE,
  access,
  isPaid,
  numbered,
  streams,
  paidRoutes,
  paymentSteps,
  priceTiers,
  pricing,
  readingSteps,
  SERVICE_NAME,
  SERVICE_SUMMARY,
  url,
  type DiscoveryDeps,
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

/** The A2A extension URI of the x402 payments extension for agents. */
const A2A_X402_EXTENSION = 'https://github.com/google-a2a/a2a-x402/v0.1';
const A2A_PROTOCOL_VERSION = '0.3.0';

export function discoveryIndex(d: DiscoveryDeps) {
  return {
    service: SERVICE_NAME,
    description: SERVICE_SUMMARY,
    apiVersion: d.apiVersion,
    baseUrl: d.baseUrl,
    paymentMode: d.paymentMode,
    documents: Object.fromEntries(Object.entries(DOCUMENT_PATHS).map(([k, p]) => [k, url(d, p)])),
    resources: d.docs.map((doc) => ({
      method: doc.method.toUpperCase(),
      path: doc.path,
      url: url(d, doc.path),
      summary: doc.summary,
      tags: doc.tags,
      access: access(doc),
      ...(isPaid(doc)
        ? {
            price: {
              from: pricing(d).tiers[0]!.price,
              per: 'bundle of count signals for one city',
              defaultCount: DEFAULT_BUNDLE,
            },
          }
        : {}),
    })),
    pricing: pricing(d),
    payment: {
      protocol: 'x402',
      x402Version: 1,
      scheme: 'exact',
      network: NETWORK,
      asset: d.usdc,
      payTo: d.payTo,
      header: 'X-Payment',
      receipt: { header: 'Authorization', scheme: 'Bearer', bearerFormat: SECURITY_SCHEMES.receipt.bearerFormat },
      steps: paymentSteps(d),
      reading: readingSteps(d),
      saltEcho: SALT_ECHO,
      receiptRecovery: receiptRecovery(d),
    },
    cities: streamList(d, 'high', '/v1/cities'),
    lowStreams: streamList(d, 'low', '/v1/cities?kind=low'),
    terms: d.termsUrl,
    license: 'Signals are licensed for your own use; resale and redistribution are not permitted.',
  };
}

function streamList(d: DiscoveryDeps, kind: 'high' | 'low', list: string) {
  const served = streams(d, kind);
  return { count: served.length, list: url(d, list), slugs: served.map((c) => c.slug) };
}

/** One paid route as the manifest's instructions name it: method, URL with its query, what it costs. */
function routeLine(d: DiscoveryDeps, doc: RouteDoc): string {
  const from = pricing(d).tiers[0]!;
  const query = doc.path === '/v1/subscribe' ? '?city=<slug>&count=<n>' : '?city=<slug>&since=<cursor>';
  const what =
    doc.path === '/v1/subscribe'
      ? 'buys a bundle of n signals for one city and answers a receipt token'
      : 'reads the signals a receipt token (or the paying wallet, signed in) is entitled to; with no entitlement left it answers the 402 that buys the next bundle (count=<n>)';
  return `- ${doc.method.toUpperCase()} ${url(d, doc.path)}${query}: ${what}. Price: count x the unit price of its tier (${priceTiers()
    .map((t) => `${t.minCount}+ at $${t.unitPriceUsd}`)
    .join(', ')}), from ${from.price} for ${from.minCount}.`;
}

/** The manifest's `instructions`: the Markdown x402scan and agentcash show an agent. */
function manifestInstructions(d: DiscoveryDeps, paid: RouteDoc[]): string {
  return [
    `# ${SERVICE_NAME}: how to pay and read`,
    SERVICE_SUMMARY,
    `Payment: x402 exact scheme, USDC (${d.usdc}) on Base (${NETWORK}), to ${d.payTo ?? 'the payTo of each 402'}.${d.paymentMode === 'mock' ? ' This instance runs in mock mode: a demo, no money moves.' : ''}`,
    '## Paid resources',
    paid.map((doc) => routeLine(d, doc)).join('\n'),
    '## Pay',
    numbered(paymentSteps(d)),
    '## Read again (no new payment)',
    numbered(readingSteps(d)),
    'An agent with an MCP host can do all of this as tools: the MCP server isocast-mcp of the npm package @isocast/client (or `isocast mcp`), with a daily spending cap.',
    `Full guide: ${url(d, DOCUMENT_PATHS.llms)}. OpenAPI: ${url(d, DOCUMENT_PATHS.openapi)}.`,
  ].join('\n\n');
}

/**
 * The x402 manifest in the shape x402scan and agentcash read (`resources` as plain URLs,
 * `instructions` as text), plus `items` in the shape of an x402 discovery listing.
 */
export function x402Manifest(d: DiscoveryDeps) {
  const paid = paidRoutes(d);
  return {
    version: 1,
    x402Version: 1,
    service: SERVICE_NAME,
    description: SERVICE_SUMMARY,
    // mock: a demo whose payments move no money; indexers and wallets must not list it as a seller.
    mode: d.paymentMode,
    resources: paid.map((doc) => url(d, doc.path)),
    items: paid.map((doc) => ({
      resource: url(d, doc.path),
      type: 'http',
      method: doc.method.toUpperCase(),
      x402Version: 1,
      description: doc.summary,
      query:
        doc.path === '/v1/subscribe'
          ? { city: 'city slug (required)', count: `bundle size, integer >= 2 (required)` }
          : {
              city: 'city slug (required)',
              since: 'cursor, default 0',
              count: `bundle size proposed in a 402, default ${DEFAULT_BUNDLE}`,
            },
      price: {
        from: pricing(d).tiers[0]!.price,
        currency: 'USDC',
        tiers: priceTiers().map(({ name, minCount, unitPriceUsd }) => ({ name, minCount, unitPriceUsd })),
        rule: pricing(d).rule,
      },
      accepts: acceptsFor(d, doc),
      nonceBinding:
        'required: the EIP-3009 nonce must be keccak256(abi.encodePacked(payer, citySlug, uint256 count, bytes32 salt)) with the salt from the 402 challenge, echoed back as payload.salt',
      saltEcho: SALT_ECHO,
    })),
    receiptRecovery: receiptRecovery(d),
    instructions: manifestInstructions(d, paid),
    llms: url(d, DOCUMENT_PATHS.llms),
    openapi: url(d, DOCUMENT_PATHS.openapi),
  };
}

/** POST /v1/receipts: a new receipt token for a wallet signature (replays never return one). */
function receiptRecovery(d: DiscoveryDeps) {
  const signed = (path: string, kind?: ReceiptSignedKind) => ({
    method: 'POST',
    url: url(d, path),
    body: '{wallet, origin, timestamp, signature}',
    typedData: receiptTypedDataDoc(originOf(d.baseUrl), kind),
  });
  return {
    ...signed('/v1/receipts'),
    revoke: signed('/v1/receipts/revoke', 'ReceiptRevocation'),
    note: `A receipt token is issued once, with the purchase that moved the money; an idempotent replay answers without one. Tokens expire (RECEIPT_TTL_DAYS); a wallet revokes all of its tokens with one ReceiptRevocation signature. Every signature names this server's origin (${originOf(d.baseUrl)}); each signed (wallet, timestamp) works once, within 600 s of server time.`,
  };
}

export function agentCard(d: DiscoveryDeps) {
  const subscribe = paidRoutes(d).find((doc) => doc.path === '/v1/subscribe') ?? paidRoutes(d)[0];
  const served = new Set(d.docs.map((doc) => doc.path));
  return {
    protocolVersion: A2A_PROTOCOL_VERSION,
    name: SERVICE_NAME,
    description:
      `${SERVICE_SUMMARY} One signal per bucket crossing of a city's observed daily high, with live odds for every bucket. ` +
      `${streams(d, 'high').length} cities (and ${streams(d, 'low').length} daily-low streams, GET /v1/cities?kind=low). Free: cities, a sample signal, prices. Paid: bundles bought with x402, read with a receipt token. ` +
      `This agent speaks plain HTTP+JSON; the OpenAPI document is at ${url(d, DOCUMENT_PATHS.openapi)}.`,
    url: d.baseUrl,
    preferredTransport: 'HTTP+JSON',
    version: d.apiVersion,
    provider: { organization: `${SERVICE_NAME} operator`, url: d.baseUrl },
    documentationUrl: url(d, DOCUMENT_PATHS.api),
    capabilities: {
      streaming: false,
      pushNotifications: false,
      stateTransitionHistory: false,
      extensions: [
        {
          uri: A2A_X402_EXTENSION,
          description: `Paid skills require an x402 payment (exact scheme, USDC on ${NETWORK}) whose EIP-3009 nonce binds payer, city and count.`,
          required: true,
          params: { x402Version: 1, accepts: subscribe ? acceptsFor(d, subscribe) : [], steps: paymentSteps(d) },
        },
      ],
    },
    securitySchemes: SECURITY_SCHEMES,
    security: [{ x402: [] }, { receipt: [] }],
    defaultInputModes: ['application/json'],
    defaultOutputModes: ['application/json'],
    // Only skills whose route this instance serves.
    skills: [
      {
        path: '/v1/subscribe',
        id: 'buy-weather-signals',
        name: 'Buy a bundle of weather-market signals',
        description: `POST ${url(d, '/v1/subscribe')}?city=<slug>&count=<n> paid with x402; returns a receipt token and the new entitlement ceiling.`,
        tags: ['x402', 'payments', 'prediction-markets', 'weather'],
        examples: ['Buy 20 signals for nyc', 'POST /v1/subscribe?city=london&count=100 with X-Payment'],
      },
      {
        path: '/v1/signals',
        id: 'read-weather-signals',
        name: 'Read entitled signals',
        description: `GET ${url(d, '/v1/signals')}?city=<slug>&since=<cursor> with Authorization: Bearer <receipt token>; pages of at most 100, ascending seq.`,
        tags: ['signals', 'prediction-markets', 'temperature'],
        examples: ['New signals for nyc since seq 12', 'GET /v1/signals?city=nyc&since=0'],
      },
      {
        path: '/v1/cities',
        id: 'list-cities',
        name: 'List covered cities',
        description: `GET ${url(d, '/v1/cities')}: the ${streams(d, 'high').length} daily-high cities (?kind=low: the ${streams(d, 'low').length} daily-low streams) with unit, bucket width, timezone and latest seq. Free.`,
        tags: ['cities', 'free'],
        examples: ['Which cities are covered?'],
      },
      {
        path: '/v1/sample',
        id: 'sample-and-prices',
        name: 'Sample signal and prices',
        description: `GET ${url(d, '/v1/sample')} for a free example signal, ${url(d, '/v1/signals/meta')} for tiers and the settlement wallet.`,
        tags: ['pricing', 'free'],
        examples: ['What does a signal look like?', 'How much do 100 signals cost?'],
      },
      {
        path: '/v1/receipts',
        id: 'recover-receipt',
        name: 'Recover a receipt token',
        description: `POST ${url(d, '/v1/receipts')} with an EIP-712 ReceiptRequest signature {wallet, origin, timestamp} gets a new receipt token for every city the wallet bought. Free.`,
        tags: ['payments', 'free'],
        examples: ['I lost my receipt token for wallet 0x...'],
      },
      {
        path: '/v1/delivery/messenger',
        id: 'chat-delivery',
        name: 'Push signals to a chat',
        description: `POST ${url(d, '/v1/delivery/messenger')} with an EIP-712 wallet signature registers the chat that receives entitled signals. Free; never charges.`,
        tags: ['delivery', 'free'],
        examples: ['Send my nyc signals to chat 123456'],
      },
    ]
      .filter((s) => served.has(s.path))
      .map(({ path: _path, ...skill }) => skill),
  };
}
