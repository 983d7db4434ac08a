import { z } from 'zod';
import { Disclaimer } from '../lib/schemas.ts';

export const Reading = z
  .object({
    reading: z.number(),
    unit: z.string(),
    bucket: z
      .string()
      .nullable()
      .describe('`<low>-<high>°<unit>`, or `<n>°<unit> or higher` / `or below` for open ends'),
  })
  .meta({ id: 'Reading' });

export const Bucket = z
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

export const IsocastSignalPublic = z
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
    bucketsAsOf: z.iso
      .datetime()
      .nullable()
      .describe('When the odds response arrived; at most 10 s after observedAt; null with buckets null'),
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
    reportedAt: z.iso
      .datetime()
      .nullable()
      .describe(
        "The station's own time of the first report in the day showing new.reading " +
          '(METAR obsTime, weather.com valid_time_gmt; simulated time with source sim). observedAt - reportedAt is the upstream ' +
          'publication lag plus the poll wait. null only on signals stored before isocast recorded it',
      ),
  })
  .meta({ id: 'IsocastSignalPublic' });

export type SignalPublic = z.infer<typeof IsocastSignalPublic>;

export const SampleSignal = IsocastSignalPublic.extend({
  sample: z.literal(true),
  synthetic: z.boolean(),
  disclaimer: Disclaimer,
}).meta({ id: 'SampleSignal' });

export const SampleQuery = z.object({ city: z.string().optional() });
