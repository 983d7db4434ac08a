import { Hono } from 'hono';
import { z } from 'zod';
import { parseQuery, replyJson, type AppEnv } from '../lib/http.ts';
import { unknownCity, ERRORS } from '../lib/api-errors.ts';
import { microToUsd } from '../lib/money.ts';
import { type RouteDoc, routeDoc } from '../lib/route-doc.ts';
import { Disclaimer, ErrorBody } from '../lib/schemas.ts';
import { once } from '../lib/once.ts';
import { NETWORK } from '../x402/networks.ts';
import { BASE_UNIT_MICRO, MIN_SPEND_MICRO, tiersPublic } from './tiers.ts';

const CURRENCY = 'USDC';

/** The answer's shape, built on first use (lib/once.ts): only the documents and tests need it. */
const SignalsMeta = once(() => {
  const Tier = z
    .object({
      name: z.string(),
      minCount: z.number().int(),
      unitPriceUsd: z.number(),
      totalUsd: z.number().describe('Total at the tier minimum count'),
    })
    .meta({ id: 'Tier' });
  return z
    .object({
      city: z.string().optional(),
      latestSeq: z.number().int().optional(),
      unitPriceUsd: z.number(),
      minSpendUsd: z.number(),
      currency: z.literal(CURRENCY),
      network: z.literal(NETWORK),
      payTo: z.string().nullable(),
      tiers: z.array(Tier),
      disclaimer: Disclaimer,
    })
    .meta({ id: 'SignalsMeta' });
});

const MetaQuery = z.object({ city: z.string().optional() });
const UNKNOWN_CITY = { description: ERRORS.unknown_city.message, schema: ErrorBody };

export function pricingRoutes(deps: {
  payTo: string | null;
  isCity(slug: string): boolean;
  latestSeq(city: string): number;
}): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const base = {
    unitPriceUsd: microToUsd(BASE_UNIT_MICRO),
    minSpendUsd: microToUsd(MIN_SPEND_MICRO),
    currency: CURRENCY,
    network: NETWORK,
    payTo: deps.payTo,
    tiers: tiersPublic(),
  };
  app.get('/v1/signals/meta', (c) => {
    const { city } = parseQuery(c, MetaQuery);
    if (city === undefined) return replyJson(c, base);
    if (!deps.isCity(city)) throw unknownCity();
    return replyJson(c, { city, latestSeq: deps.latestSeq(city), ...base });
  });
  return app;
}

export const pricingDocs: RouteDoc[] = [
  routeDoc('get /v1/signals/meta', 'signals', {
    summary: 'Prices, tiers and payment network; never signal rows',
    query: MetaQuery,
    responses: { 200: { description: 'Pricing metadata', schema: SignalsMeta }, 404: UNKNOWN_CITY },
  }),
];
