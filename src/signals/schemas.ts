import { z } from 'zod';
import { Disclaimer } from '../lib/schemas.ts';
import { once } from '../lib/once.ts';

const OLD_ROWS = 'null on signals stored before isocast recorded it (schema version 0019)';

// The two nullable shapes most fields share: an instant, and a text.
const instantOrNull = () => z.iso.datetime().nullable();
const textOrNull = () => z.string().nullable();

/** Extensions, so a buyer can check `rawReport` and each step's lag; the Bazaar listing leaves them out. */
export const SignalProvenance = once(() =>
  z.object({
    channel: textOrNull().describe(
      'The wire the reading came over: metar-api (aviationweather.gov data API), wu (weather.com), hko (Hong Kong ' +
        'Observatory open data), sim (the simulated feed). Signals stored before it existed carry the one their source implies',
    ),
    rawReport: textOrNull().describe(
      'The report that first showed new.reading, as the source published it (the METAR text: its RMK T group holds the ' +
        `tenths); null for sources without report text (wu, hko, sim) and ${OLD_ROWS}`,
    ),
    reportedValue: z
      .number()
      .nullable()
      .describe(
        "That report's temperature as used, before conversion and the rule's rounding to new.reading (e.g. 23.3 from " +
          `T02330117); ${OLD_ROWS}`,
      ),
    reportedUnit: z.enum(['C', 'F']).nullable().describe(`Unit of reportedValue (METAR is always C); ${OLD_ROWS}`),
    reportedPrecision: z
      .number()
      .positive()
      .nullable()
      .describe(
        `Step of reportedValue as the source gave it: 0.1 (tenths: a METAR T group, HKO) or 1 (whole degrees); ${OLD_ROWS}`,
      ),
    availableAt: instantOrNull().describe(
      "The source's own time of receiving that report, where it publishes one (aviationweather.gov receiptTime); " +
        `availableAt - reportedAt is the source's lag. null for wu, hko and sim, and ${OLD_ROWS}`,
    ),
    storedAt: instantOrNull().describe(
      'When isocast committed the signal (the row is written once, in the transaction that gives it its seq); storedAt - ' +
        'observedAt is our own work, odds sampling included',
    ),
  }),
);

/** The signal as the API serves it, built on first use (lib/once.ts): nothing before the first answer needs it. */
export const signalSchema = once(() => {
  const Reading = z
    .object({
      reading: z.number(),
      unit: z.string(),
      bucket: textOrNull().describe('`<low>-<high>°<unit>`, or `<n>°<unit> or higher` / `or below` for open ends'),
    })
    .meta({ id: 'Reading' });

  const Bucket = z
    .object({
      label: z.string(),
      conditionId: z.string(),
      yes: z.number().min(0).max(1),
      no: z.number().min(0).max(1),
      midpoint: z.number().min(0).max(1),
      dead: z
        .literal(true)
        .optional()
        .describe('Present and true only when the day reading can no longer reach the bucket'),
      noQuote: z
        .literal(true)
        .optional()
        .describe(
          "Present and true only when the bucket's order books were empty and it never traded: " +
            'its prices are then the widest possible market (yes 1, no 1, midpoint 0.5), not a quote; the other buckets keep theirs',
        ),
    })
    .meta({ id: 'Bucket' });

  return z
    .object({
      city: z.string(),
      displayName: z.string(),
      seq: z.number().int().min(1),
      targetDate: z.string(),
      marketUrl: z.url(),
      conditionId: z.string().regex(/^0x[0-9a-fA-F]+$/),
      old: Reading,
      new: Reading,
      buckets: z
        .array(Bucket)
        .nullable()
        .describe(
          'Odds of every bucket, coldest first, at bucketsAsOf; null when the whole ladder ' +
            'could not be priced within 10 s of observedAt (the signal is not held back for odds)',
        ),
      bucketsAsOf: instantOrNull().describe(
        'When the odds response arrived; at most 10 s after observedAt; null with buckets null',
      ),
      source: z
        .string()
        .describe(
          "Feed the reading came from, chosen by the market day's own resolution rule (see resolution on " +
            "/v1/cities/{slug}): wu = weather.com, the rows of the Weather Underground table a wu rule names; metar = the station's METAR " +
            "reports, which NOAA's timeseries shows for a noaa rule (an approximation for a wu rule when the operator chose it); sim = " +
            'the simulated feed. One day never mixes feeds.',
        ),
      observedAt: z.iso
        .datetime()
        .describe(
          'When isocast received the observations that showed the crossing (the first poll that ' +
            'saw them); the signal is committed at most about 10 s later',
        ),
      reportedAt: instantOrNull().describe(
        "The station's own time of the first report in the day showing new.reading " +
          '(METAR obsTime, weather.com valid_time_gmt; simulated time with source sim). observedAt - reportedAt is the upstream ' +
          'publication lag plus the poll wait. null only on signals stored before isocast recorded it',
      ),
      ...SignalProvenance().shape,
    })
    .meta({ id: 'IsocastSignalPublic' });
});

export type SignalPublic = z.infer<ReturnType<typeof signalSchema>>;

/** The sample's shape, built on first use (lib/once.ts): only the documents and tests need it. */
export const SampleSignal = once(() =>
  signalSchema()
    .extend({
      sample: z.literal(true),
      synthetic: z.boolean(),
      disclaimer: Disclaimer,
    })
    .meta({ id: 'SampleSignal' }),
);

export const SampleQuery = once(() => z.object({ city: z.string().optional() }));

/** `/v1/stats/latency`'s shapes, built on first use: only the documents, the operator page and tests need them. */
export const LatencyWindowSchema = once(() => {
  const Percentiles = z
    .object({
      count: z.number().int().min(0).describe('Signals that have both instants of this step'),
      p50Ms: z.number().int().nullable(),
      p90Ms: z.number().int().nullable(),
      p99Ms: z.number().int().nullable(),
    })
    .describe('Nearest-rank percentiles in milliseconds; null when count is 0')
    .meta({ id: 'LatencyPercentiles' });

  const Stages = z
    .object({
      reportToAvailable: Percentiles.describe(
        "availableAt - reportedAt: the source's own lag (METAR receiptTime only)",
      ),
      availableToObserved: Percentiles.describe('observedAt - availableAt: our polling'),
      observedToStored: Percentiles.describe('storedAt - observedAt: our work, odds sampling included'),
      reportToStored: Percentiles.describe('storedAt - reportedAt: the whole path from the station to a stored signal'),
    })
    .meta({ id: 'LatencyStages' });

  const Group = { signals: z.number().int().min(0), stages: Stages };

  return z
    .object({
      window: z.enum(['24h', '7d']),
      from: z.iso.datetime(),
      to: z.iso.datetime(),
      signals: z.number().int().min(0).describe('Signals committed in (from, to]'),
      bySource: z.array(
        z.object({
          channel: z.string().describe('metar-api, wu, hko, sim; unknown for a signal without one'),
          ...Group,
        }),
      ),
      byCity: z.array(z.object({ city: z.string(), ...Group })),
    })
    .meta({ id: 'LatencyWindow' });
});

export const LatencyStats = once(() =>
  z
    .object({
      generatedAt: z.iso.datetime().describe('When these figures were computed; they are cached for 30 s'),
      windows: z.array(LatencyWindowSchema()),
      truncated: z
        .boolean()
        .describe('true when the 7 days held more signals than the figures read (the newest are read)'),
      disclaimer: Disclaimer,
    })
    .meta({ id: 'LatencyStats' }),
);

/** `/v1/sample`'s example when no real seq-1 signal exists (marked `synthetic: true`; its ids are made up). */
const labels = [
  '35°F or below',
  ...Array.from({ length: 9 }, (_, i) => `${36 + 2 * i}-${37 + 2 * i}°F`),
  '54°F or higher',
];
const yes = [0.001, 0.001, 0.002, 0.004, 0.06, 0.41, 0.33, 0.13, 0.04, 0.015, 0.008];

export const SYNTHETIC_SAMPLE: SignalPublic = {
  city: 'nyc',
  displayName: 'NYC',
  seq: 1,
  targetDate: '2026-01-15',
  marketUrl: 'https://polymarket.com/event/highest-temperature-in-nyc-on-january-15-2026',
  conditionId: '0x' + '5a'.repeat(32),
  old: { reading: 41, unit: 'F', bucket: '40-41°F' },
  new: { reading: 44, unit: 'F', bucket: '44-45°F' },
  buckets: labels.map((label, i) => ({
    label,
    conditionId: '0x' + (i + 16).toString(16).padStart(2, '0').repeat(32),
    yes: yes[i]!,
    no: Math.min(0.999, Math.round((1 - yes[i]! + 0.002) * 1000) / 1000),
    midpoint: Math.round((yes[i]! - 0.001) * 10000) / 10000 || 0.0005,
    ...(i < 5 ? { dead: true as const } : {}),
  })),
  bucketsAsOf: '2026-01-15T17:52:03.000Z',
  source: 'wu',
  observedAt: '2026-01-15T17:52:01.000Z',
  reportedAt: '2026-01-15T17:51:00.000Z',
  channel: 'wu',
  rawReport: null,
  reportedValue: 44,
  reportedUnit: 'F',
  reportedPrecision: 1,
  availableAt: null,
  storedAt: '2026-01-15T17:52:03.400Z',
};
