import { z } from 'zod';
import { Disclaimer } from '../lib/schemas.ts';
import { once } from '../lib/once.ts';
import { NETWORK } from '../x402/networks.ts';

/** The JSON documents' shapes (spec 4.1 leaves them "not shown"), built on first use: promised fields, more may come (loose). */
export const documentSchemas = once(() => {
  const DiscoveryAccept = z
    .object({
      scheme: z.literal('exact'),
      network: z.literal(NETWORK),
      price: z.string().describe('USD price, `$<amount>`'),
      payTo: z.string(),
      description: z.string(),
      mimeType: z.literal('application/json'),
      maxAmountRequired: z.string().describe('Atomic USDC units'),
      asset: z.string(),
      resource: z.url(),
      maxTimeoutSeconds: z.number().int(),
      extra: z.object({
        name: z.string(),
        version: z.string(),
        tier: z.string(),
        count: z.number().int(),
        binding: z.object({ formula: z.string(), salt: z.string().describe('Where the per-request salt is served') }),
      }),
    })
    .meta({
      id: 'DiscoveryAccept',
      description: 'An x402 payment option for a tier minimum; the live challenge adds the binding salt',
    });

  const PriceTier = z.object({
    name: z.string(),
    minCount: z.number().int(),
    unitPriceUsd: z.number(),
    totalUsd: z.number(),
    price: z.string(),
  });

  const Pricing = z
    .object({
      currency: z.literal('USDC'),
      network: z.literal(NETWORK),
      asset: z.string(),
      payTo: z.string().nullable(),
      unitPriceUsd: z.number(),
      minSpendUsd: z.number(),
      minCount: z.number().int(),
      maxCount: z.number().int(),
      defaultCount: z.number().int(),
      tiers: z.array(PriceTier),
      rule: z.string(),
    })
    .meta({ id: 'Pricing' });

  // A served JSON document: the promised fields, the router's disclaimer, and room for more (loose).
  const served = <T extends z.ZodRawShape>(id: string, shape: T, description?: string) =>
    z
      .object({ ...shape, disclaimer: Disclaimer })
      .loose()
      .meta(description ? { id, description } : { id });

  const Streams = z.object({ count: z.number().int(), list: z.url(), slugs: z.array(z.string()) });
  const DiscoveryIndex = served('DiscoveryIndex', {
    service: z.literal('isocast'),
    description: z.string(),
    apiVersion: z.string(),
    baseUrl: z.url(),
    paymentMode: z.enum(['mock', 'live']),
    documents: z.record(z.string(), z.url()),
    resources: z.array(
      z.object({
        method: z.string(),
        path: z.string(),
        url: z.string(),
        summary: z.string(),
        tags: z.array(z.string()),
        access: z.enum(['free', 'paid', 'paid-or-receipt', 'operator']),
        price: z.object({ from: z.string(), per: z.string(), defaultCount: z.number().int() }).optional(),
      }),
    ),
    pricing: Pricing,
    payment: z.object({
      protocol: z.literal('x402'),
      x402Version: z.literal(1),
      scheme: z.literal('exact'),
      network: z.string(),
      asset: z.string(),
      payTo: z.string().nullable(),
      header: z.literal('X-Payment'),
      receipt: z.object({ header: z.string(), scheme: z.string(), bearerFormat: z.string() }),
      steps: z.array(z.string()),
      reading: z.array(z.string()),
    }),
    cities: Streams.describe("The spec's cities: daily-high markets"),
    lowStreams: Streams.describe('Daily-low streams (<city>-low): served and sold like cities, listed apart'),
    terms: z.url(),
    license: z.string(),
  });

  const X402Manifest = served('X402Manifest', {
    version: z.literal(1),
    x402Version: z.literal(1),
    service: z.string(),
    description: z.string(),
    resources: z.array(z.url()).describe('The paid resources, as plain URLs'),
    items: z.array(
      z.object({
        resource: z.url(),
        type: z.literal('http'),
        method: z.string(),
        x402Version: z.literal(1),
        description: z.string(),
        query: z.record(z.string(), z.string()),
        price: z.object({
          from: z.string(),
          currency: z.literal('USDC'),
          tiers: z.array(z.object({ name: z.string(), minCount: z.number().int(), unitPriceUsd: z.number() })),
          rule: z.string(),
        }),
        accepts: z.array(DiscoveryAccept),
        nonceBinding: z.string(),
      }),
    ),
    instructions: z
      .string()
      .describe('How to pay and read again, as Markdown: every paid route with its method and price, then the steps'),
    llms: z.url(),
    openapi: z.url(),
  });

  const AgentCard = served(
    'AgentCard',
    {
      protocolVersion: z.string(),
      name: z.string(),
      description: z.string(),
      url: z.url(),
      preferredTransport: z.string(),
      version: z.string(),
      provider: z.object({ organization: z.string(), url: z.url() }),
      documentationUrl: z.url(),
      capabilities: z.object({
        streaming: z.boolean(),
        pushNotifications: z.boolean(),
        stateTransitionHistory: z.boolean(),
        extensions: z.array(
          z.object({
            uri: z.string(),
            description: z.string(),
            required: z.boolean(),
            params: z.record(z.string(), z.unknown()),
          }),
        ),
      }),
      securitySchemes: z.record(z.string(), z.record(z.string(), z.unknown())),
      security: z.array(z.record(z.string(), z.array(z.string()))),
      defaultInputModes: z.array(z.string()),
      defaultOutputModes: z.array(z.string()),
      skills: z.array(
        z.object({
          id: z.string(),
          name: z.string(),
          description: z.string(),
          tags: z.array(z.string()),
          examples: z.array(z.string()),
        }),
      ),
    },
    'A2A agent card',
  );

  const OpenApiDocument = z
    .object({
      openapi: z.string(),
      info: z.record(z.string(), z.unknown()),
      paths: z.record(z.string(), z.unknown()),
      components: z.record(z.string(), z.unknown()),
      'x-disclaimer': Disclaimer,
    })
    .loose()
    .meta({
      id: 'OpenApiDocument',
      description: 'This document. The disclaimer is `x-disclaimer`: OpenAPI allows no other root field',
    });
  return { DiscoveryIndex, X402Manifest, AgentCard, OpenApiDocument };
});

export const AssetParams = z.object({ file: z.enum(['api.css', 'api.js']).describe('Page asset') });
