import { z } from 'zod';
import { Disclaimer } from '../lib/schemas.ts';
import { once } from '../lib/once.ts';

/** nyc's metadata as the catalog gives it: the example of the OpenAPI document and the Bazaar declaration. */
const RESOLUTION_EXAMPLE = {
  station: 'KLGA',
  unit: 'F',
  ruleKind: 'wu-table',
  rounding: 'half-up',
  roundingRule: 'every row of the daily observations table (METAR and SPECI), whole degrees half-up',
  resolutionSource: 'wu',
  resolutionUrl: 'https://www.wunderground.com/history/daily/us/ny/new-york-city/KLGA',
  bucketWidth: 2,
  from: 'catalog',
} as const;

/** A market's resolution metadata (routes.ts marketResolution), with the example the OpenAPI document shows; built on first use. */
export const MarketResolution = once(() =>
  z
    .object({
      station: z.string().nullable().describe('ICAO code of the station the market resolves on; null when none'),
      unit: z.enum(['C', 'F']).describe('Unit the market resolves in'),
      // buckets/daily-high.ts KIND_RULES' keys (a sibling folder of this layer; test/cities/resolution-metadata.test.ts compares them)
      ruleKind: z
        .enum(['noaa-hourly', 'noaa-all', 'wu-table', 'hko', 'cwa'])
        .describe('Which reports count: noaa-hourly, noaa-all, wu-table (every row), hko or cwa (0.1 degree maximum)'),
      rounding: z.enum(['half-up', 'floor-tenth']).describe('How the maximum becomes whole degrees'),
      roundingRule: z.string().describe('The rounding and the reports that count, in words'),
      resolutionSource: z.string().describe('wu (Weather Underground), noaa, hko, cwa or unknown'),
      resolutionUrl: z.string().describe('The resolution page the market names'),
      bucketWidth: z.number().describe('Bucket width in the unit'),
      from: z
        .enum(['market-rule', 'catalog'])
        .describe("market-rule: read from the current market day's own rule; catalog: the default until then"),
    })
    .meta({
      id: 'MarketResolution',
      examples: [RESOLUTION_EXAMPLE],
    }),
);

// The answer shapes below are built on first use (lib/once.ts): only the documents and tests need them.
const CityPublic = once(() =>
  z
    .object({
      slug: z.string(),
      displayName: z.string(),
      country: z.string().nullable(),
      unit: z.string().describe('Temperature unit, C or F'),
      bucketWidth: z.number().describe('Bucket width in the city unit'),
      timezone: z.string().describe('IANA timezone of the market day'),
      resolutionSource: z
        .string()
        .describe(
          "Who resolves the current market day, read from the market's own rule: wu (Weather Underground), " +
            "noaa (NOAA station timeseries), hko, cwa, or unknown; the catalog default until the day's event has been read",
        ),
      station: z
        .string()
        .nullable()
        .describe("ICAO code of the station the current day's rule names (null when the rule names no station)"),
      latestSeq: z.number().int().describe('Highest published signal seq for the city'),
      kind: z
        .enum(['high', 'low'])
        .describe(
          "Which extreme the stream's markets resolve on: high (the spec's daily-high markets; slug = the city) or low " +
            '(daily-low markets, "Lowest temperature in <city> on <date>"; slug = <city>-low, e.g. nyc-low). Each is its own stream: ' +
            'own seq from 1, entitlements, prices and receipts',
        ),
    })
    .meta({ id: 'City' }),
);

export type MarketResolutionBody = z.infer<ReturnType<typeof MarketResolution>>;

export const CityListQuery = once(() =>
  z.object({
    sort: z
      .enum(['recent'])
      .optional()
      .describe(
        'recent: cities whose latest signal is newest come first (cities without a signal last): where signals are flowing right now',
      ),
    kind: z
      .enum(['high', 'low', 'all'])
      .optional()
      .describe(
        "high (the default: the spec's daily-high cities), low (only the daily-low streams, slug <city>-low) or all (both)",
      ),
  }),
);

export const CityList = once(() =>
  z.object({ cities: z.array(CityPublic()), count: z.number().int(), disclaimer: Disclaimer }).meta({ id: 'CityList' }),
);

const ResolutionRulePublic = once(() =>
  z
    .object({
      targetDate: z.string().describe('Market day the rule belongs to'),
      source: z.enum(['wu', 'noaa', 'hko', 'cwa', 'unknown']),
      station: z.string().nullable().describe('ICAO code, or the page URL for hko and cwa'),
      unit: z.enum(['C', 'F']).nullable(),
      precision: z.number().nullable().describe('Degrees the source resolves to: 1 or 0.1'),
      fallback: z.string().nullable().describe('Source used when the primary has no data in time (wu)'),
      url: z.string().nullable().describe('Resolution page the rule names'),
      status: z
        .enum(['ok', 'paused'])
        .describe('paused: the rule does not match the catalog or cannot be observed; no signals that day'),
      pausedReason: z.string().nullable(),
      observedWith: z.string().nullable().describe("Feed the day's signals come from: wu (weather.com), metar, sim"),
    })
    .meta({ id: 'ResolutionRule' }),
);

export const CityDetail = once(() =>
  z
    .object({
      city: CityPublic(),
      targetDate: z.string().describe('City-local market day, YYYY-MM-DD'),
      marketUrl: z.url(),
      resolutionMetadata: MarketResolution(),
      resolution: ResolutionRulePublic()
        .nullable()
        .describe("The current market day's parsed resolution rule; null until the poller has read the day's event"),
      disclaimer: Disclaimer,
    })
    .meta({ id: 'CityDetail' }),
);

export const CityParams = once(() => z.object({ slug: z.string().describe('City slug') }));
