import { z } from 'zod';
import { inlineSchema, type JsonSchema } from '../lib/json-schema.ts';
import { microToUsd } from '../lib/money.ts';
import { once } from '../lib/once.ts';
import { bundlePrice } from '../../packages/isocast-client/src/pricing.ts';
import { signalSchema, SignalProvenance, SYNTHETIC_SAMPLE } from '../signals/schemas.ts';
import { disclaimerText } from '../terms/terms.ts';
import { echoedVerbatim } from '../x402/v2.ts';
import { paymentSchemas } from './schemas.ts';

/**
 * Each paid route's Bazaar declaration (docs/discovery.md) as plain data in @x402/extensions' shape (bazaar.test.ts
 * compares): the library costs a start 400 ms. Schemas are inlined: a declaration cannot point at `components`.
 */

export type Listing = { description: string; extensions: { bazaar: BazaarDeclaration } };

type BazaarDeclaration = { info: Record<string, unknown>; schema: JsonSchema };

type RouteListing = {
  method: 'GET' | 'POST';
  description: string;
  query: z.ZodObject;
  queryExample: Record<string, string>;
  output: z.ZodType;
  outputExample: (disclaimer: string) => unknown;
};

const EXAMPLE_CITY = 'nyc';
const EXAMPLE_COUNT = 20;
const EXAMPLE_PRICE = bundlePrice(EXAMPLE_COUNT);
const WHAT =
  "isocast: one signal when a city's observed daily high temperature crosses into a new bucket of its " +
  "prediction market, with the reading and every bucket's odds at that moment.";
const PAY = `x402, USDC on Base, from ${microToUsd(EXAMPLE_PRICE.unitMicro)} USDC a signal; informational only, not advice.`;

const provenance = once(
  () =>
    Object.fromEntries(Object.keys(SignalProvenance().shape).map((k) => [k, true as const])) as {
      [K in keyof ReturnType<typeof SignalProvenance>['shape']]: true;
    },
);

/** The spec's signal fields, further allowed: the provenance fields would take PAYMENT-REQUIRED past 8 KiB. */
export const listedSignalsPage = once(() =>
  paymentSchemas().SignalsPage.extend({ signals: z.array(signalSchema().omit(provenance()).loose()) }),
);

const listedExample = () => {
  const signal: Record<string, unknown> = { ...SYNTHETIC_SAMPLE, buckets: SYNTHETIC_SAMPLE.buckets!.slice(5, 6) };
  for (const k of Object.keys(provenance())) delete signal[k];
  return signal;
};

// On first use: paid-routes.ts reaches this module through challenge.ts, before its schemas exist.
const routes = once(
  (): Record<string, RouteListing> => ({
    '/v1/signals': {
      method: 'GET',
      description: `${WHAT} GET /v1/signals?city=<slug>&count=<n> buys a bundle of n signals for one city and reads them, ascending, with a cursor (since). ${PAY}`,
      query: paymentSchemas().SignalsQuery,
      queryExample: { city: EXAMPLE_CITY, count: String(EXAMPLE_COUNT), since: '0' },
      output: listedSignalsPage(),
      outputExample: (disclaimer) => ({
        // The entered bucket alone: the whole ladder would double the declaration's size.
        signals: [listedExample()],
        next_cursor: 1,
        paid_through: EXAMPLE_COUNT,
        latest: 1,
        more: false,
        disclaimer,
      }),
    },
    '/v1/subscribe': {
      method: 'POST',
      description: `${WHAT} POST /v1/subscribe?city=<slug>&count=<n> buys a bundle of n signals for one city and answers a receipt token that reads them at GET /v1/signals. ${PAY}`,
      query: paymentSchemas().SubscribeQuery,
      queryExample: { city: EXAMPLE_CITY, count: String(EXAMPLE_COUNT) },
      output: paymentSchemas().SubscribeResult,
      outputExample: (disclaimer) => ({
        ok: true,
        city: EXAMPLE_CITY,
        count: EXAMPLE_COUNT,
        unitPriceUsd: microToUsd(EXAMPLE_PRICE.unitMicro),
        amountUsd: microToUsd(EXAMPLE_PRICE.totalMicro),
        latestSeq: 1,
        paidThroughSeq: EXAMPLE_COUNT,
        receiptToken: `isr_${'A'.repeat(16)}_${'B'.repeat(43)}`,
        txHash: `0x${'ab'.repeat(32)}`,
        idempotent: false,
        disclaimer,
      }),
    },
  }),
);

/** Without prose or examples: a stock v2 client echoes the declaration into PAYMENT-SIGNATURE, a bounded header. */
function terse(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(terse);
  if (!node || typeof node !== 'object') return node;
  const nullable = orNull(node as Record<string, unknown>);
  if (nullable) return terse(nullable);
  return Object.fromEntries(
    Object.entries(node)
      .filter(([k, v]) => !(k === 'description' && typeof v === 'string') && !(k === 'examples' && Array.isArray(v)))
      .map(([k, v]) => [k, terse(v)]),
  );
}

/**
 * `{anyOf: [S, {type: 'null'}]}` as `{...S, type: [S.type, 'null']}`: the same set of values in
 * half the bytes, for every nullable field (a signal has nine). Not when S lists its values
 * (enum, const), which would then have to list null too.
 */
function orNull(node: Record<string, unknown>): Record<string, unknown> | null {
  const any = node.anyOf;
  if (!Array.isArray(any) || any.length !== 2 || Object.keys(node).some((k) => k !== 'anyOf' && k !== 'description'))
    return null;
  const [s, n] = any as Record<string, unknown>[];
  if (!s || !n || typeof s.type !== 'string' || 'enum' in s || 'const' in s) return null;
  if (Object.keys(n).length !== 1 || n.type !== 'null') return null;
  return { ...s, type: [s.type, 'null'] };
}

export const schemaOf = (schema: z.ZodType, io: 'input' | 'output') => terse(inlineSchema(schema, io)) as JsonSchema;

function declare(r: RouteListing, disclaimer: string): BazaarDeclaration {
  // A POST is a body method to the Bazaar; ours takes no body, so the body is an empty object.
  const post = r.method === 'POST';
  const input = {
    type: 'http',
    ...(post && { bodyType: 'json', body: {} }),
    queryParams: r.queryExample,
    method: r.method,
  };
  const inputProps: Record<string, unknown> = {
    type: { type: 'string', const: 'http' },
    method: { type: 'string', enum: [r.method] },
    ...(post && {
      bodyType: { type: 'string', enum: ['json', 'form-data', 'text'] },
      body: { type: 'object', properties: {}, additionalProperties: false },
    }),
    queryParams: { type: 'object', ...schemaOf(r.query, 'input') },
  };
  return {
    info: { input, output: { type: 'json', example: r.outputExample(disclaimer) } },
    schema: {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: {
        input: {
          type: 'object',
          properties: inputProps,
          required: post ? ['type', 'method', 'bodyType', 'body'] : ['type', 'method'],
          additionalProperties: false,
        },
        output: {
          type: 'object',
          properties: {
            type: { type: 'string' },
            example: { type: 'object', ...schemaOf(r.output, 'output') },
          },
          required: ['type'],
        },
      },
      required: ['input'],
    },
  };
}

const built = new Map<string, Listing>();

/** The listing of the paid route a resource path (or URL) names, or null; built on first use and kept. */
export function listingFor(resource: string, termsUrl: string): Listing | null {
  const path = resource.startsWith('/') ? resource.split('?')[0]! : new URL(resource).pathname;
  const route = routes()[path];
  if (!route) return null;
  const key = `${path}\n${termsUrl}`;
  let l = built.get(key);
  if (!l) {
    l = { description: route.description, extensions: { bazaar: declare(route, disclaimerText(termsUrl)) } };
    built.set(key, l);
    echoedVerbatim('bazaar', l.extensions.bazaar);
  }
  return l;
}
