import { MAX_COUNT, MIN_COUNT } from '../pricing.ts';
import { type Api, failureOf, ToolFailure } from './api.ts';
import { type BuyContext, buySignals } from './buy.ts';
import { MAX_WAIT_S, type ReadContext, readSignals } from './read.ts';

/**
 * The four tools: their JSON Schemas (what the host shows the model) and the handlers. Every
 * handler answers `structuredContent` (matching outputSchema) plus one short line of text; a
 * failure throws ToolFailure, which the server turns into an isError result with its message.
 */
type Json = Record<string, unknown>;
export type ToolContext = BuyContext & ReadContext & { api: Api };
export type Tool = {
  name: string;
  description: string;
  inputSchema: Json & { type: 'object' };
  outputSchema: Json & { type: 'object' };
  run(ctx: ToolContext, args: Json): Promise<{ structured: Json; text: string }>;
};

const CITY = { type: 'string', pattern: '^[a-z0-9-]{1,64}$', description: 'City slug from list_cities, e.g. nyc' };
const open = (properties: Json, required: string[]) =>
  ({ type: 'object', properties, required, additionalProperties: true }) as const;

function city(args: Json): string {
  const c = typeof args.city === 'string' ? args.city.trim().toLowerCase() : '';
  if (!/^[a-z0-9-]{1,64}$/.test(c)) throw new ToolFailure('city: expected a slug such as nyc (list_cities lists them)');
  return c;
}

function int(args: Json, name: string, o: { fallback?: number; min: number; max: number }): number {
  const v = args[name] ?? o.fallback;
  if (!Number.isSafeInteger(v) || (v as number) < o.min || (v as number) > o.max)
    throw new ToolFailure(`${name}: expected an integer from ${o.min} to ${o.max}`);
  return v as number;
}

export const TOOLS: Tool[] = [
  {
    name: 'list_cities',
    description:
      'List the temperature-market streams isocast serves: city slug, name, kind (daily high or low), ' +
      'unit, timezone and latest signal seq. Free.',
    inputSchema: {
      type: 'object',
      properties: { kind: { type: 'string', enum: ['high', 'low'], description: 'Only streams of this kind' } },
      additionalProperties: false,
    },
    outputSchema: open({ cities: { type: 'array', items: { type: 'object' } } }, ['cities']),
    async run(ctx, args) {
      if (args.kind !== undefined && args.kind !== 'high' && args.kind !== 'low')
        throw new ToolFailure('kind: expected high or low');
      const a = await ctx.api.call('GET', `/v1/cities${args.kind ? `?kind=${args.kind}` : ''}`);
      if (a.status !== 200 || !Array.isArray(a.body.cities)) throw failureOf('cannot list the cities', a);
      const cities = a.body.cities as { slug: string; latestSeq?: number }[];
      const shown = cities.map((c) => `${c.slug} (latest seq ${c.latestSeq ?? 0})`).join(', ');
      return { structured: { cities }, text: `${cities.length} streams: ${shown}` };
    },
  },
  {
    name: 'get_sample',
    description:
      "A city's free sample signal (its first signal once a second exists, else a fixed synthetic example), " +
      'to see what a paid signal holds before buying. Free.',
    inputSchema: { type: 'object', properties: { city: CITY }, required: ['city'], additionalProperties: false },
    outputSchema: open({ sample: { type: 'object' } }, ['sample']),
    async run(ctx, args) {
      const c = city(args);
      const a = await ctx.api.call('GET', `/v1/sample?city=${encodeURIComponent(c)}`);
      if (a.status !== 200) throw failureOf('cannot read the sample', a);
      const kind = a.body.synthetic === true ? 'a synthetic example' : `seq ${a.body.seq}`;
      return {
        structured: { sample: a.body },
        text: `sample for ${c}: ${kind}, new bucket ${a.body.new?.bucket ?? '?'}`,
      };
    },
  },
  {
    name: 'buy_signals',
    description:
      'Pay in USDC on Base (x402) for the next `count` signals of a city. Checks the payment request before ' +
      'signing (published wallet, price table, USDC) and refuses when the price would pass the daily cap ' +
      'set by ISOCAST_MAX_USD_PER_DAY. Answers the price paid and paidThroughSeq, the entitlement ceiling.',
    inputSchema: {
      type: 'object',
      properties: {
        city: CITY,
        count: {
          type: 'integer',
          minimum: MIN_COUNT,
          maximum: MAX_COUNT,
          description: 'Signals to buy (0.005 USDC each below 100, cheaper in larger bundles)',
        },
      },
      required: ['city', 'count'],
      additionalProperties: false,
    },
    outputSchema: open(
      {
        city: { type: 'string' },
        count: { type: 'integer' },
        amountUsd: { type: 'string' },
        amountMicroUsdc: { type: 'integer' },
        paidThroughSeq: { type: 'integer' },
        latestSeq: { type: 'integer' },
        spentTodayUsd: { type: 'string' },
        dailyCapUsd: { type: 'string' },
      },
      ['city', 'count', 'amountUsd', 'amountMicroUsdc', 'paidThroughSeq', 'spentTodayUsd', 'dailyCapUsd'],
    ),
    async run(ctx, args) {
      const input = { city: city(args), count: int(args, 'count', { min: MIN_COUNT, max: MAX_COUNT }) };
      const r = await buySignals(ctx, input);
      return {
        structured: r,
        text:
          `bought ${r.count} ${r.city} signals for ${r.amountUsd} USDC; entitled through seq ${r.paidThroughSeq}; ` +
          `spent today ${r.spentTodayUsd} of ${r.dailyCapUsd} USDC`,
      };
    },
  },
  {
    name: 'read_signals',
    description:
      'Read the signals this wallet has paid for in a city, after seq `since` (0 for the first page). ' +
      'Answers up to 100 signals, next_cursor (pass it as since) and more. `wait` (seconds, at most 25) ' +
      'holds the call until a new signal arrives. Free once bought.',
    inputSchema: {
      type: 'object',
      properties: {
        city: CITY,
        since: { type: 'integer', minimum: 0, description: 'Cursor: the last seq already read [0]' },
        wait: { type: 'integer', minimum: 0, maximum: MAX_WAIT_S, description: 'Long-poll seconds [0]' },
      },
      required: ['city'],
      additionalProperties: false,
    },
    outputSchema: open(
      {
        city: { type: 'string' },
        signals: { type: 'array', items: { type: 'object' } },
        next_cursor: { type: 'integer' },
        paid_through: { type: 'integer' },
        latest: { type: 'integer' },
        more: { type: 'boolean' },
      },
      ['city', 'signals', 'next_cursor', 'more'],
    ),
    async run(ctx, args) {
      const input = {
        city: city(args),
        since: int(args, 'since', { fallback: 0, min: 0, max: Number.MAX_SAFE_INTEGER }),
        wait: int(args, 'wait', { fallback: 0, min: 0, max: MAX_WAIT_S }),
      };
      const r = await readSignals(ctx, input);
      const n = (r.signals as unknown[]).length;
      return {
        structured: r,
        text: `${n} ${input.city} signals after seq ${input.since}; next_cursor ${r.next_cursor}${r.more ? ', more to read' : ''}`,
      };
    },
  },
];
