import { z } from 'zod';
import { Disclaimer } from '../lib/schemas.ts';

export const CityPublic = z
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
  .meta({ id: 'City' });

export const CityListQuery = z.object({
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
});

export const CityList = z
  .object({ cities: z.array(CityPublic), count: z.number().int(), disclaimer: Disclaimer })
  .meta({ id: 'CityList' });

export const ResolutionRulePublic = z
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
  .meta({ id: 'ResolutionRule' });

export const CityDetail = z
  .object({
    city: CityPublic,
    targetDate: z.string().describe('City-local market day, YYYY-MM-DD'),
    marketUrl: z.url(),
    resolution: ResolutionRulePublic.nullable().describe(
      "The current market day's parsed resolution rule; null until the poller has read the day's event",
    ),
    disclaimer: Disclaimer,
  })
  .meta({ id: 'CityDetail' });

export const CityParams = z.object({ slug: z.string().describe('City slug') });
