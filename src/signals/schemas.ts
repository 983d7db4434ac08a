import { z } from 'zod';
import { Disclaimer } from '../lib/schemas.ts';

export const Reading = z.object({
  reading: z.number(),
  unit: z.string(),
  bucket: z.string().nullable().describe('`<low>-<high>°<unit>`, or `<n>°<unit> or higher` / `or below` for open ends'),
}).meta({ id: 'Reading' });

export const Bucket = z.object({
  label: z.string(),
  conditionId: z.string(),
  yes: z.number().min(0).max(1),
  no: z.number().min(0).max(1),
  midpoint: z.number().min(0).max(1),
  dead: z.literal(true).optional().describe('Present and true only when the day reading can no longer reach the bucket'),
}).meta({ id: 'Bucket' });

export const IsocastSignalPublic = z.object({
  city: z.string(),
  displayName: z.string(),
  seq: z.number().int().min(1),
  targetDate: z.string(),
  marketUrl: z.url(),
  conditionId: z.string().regex(/^0x[0-9a-fA-F]+$/),
  old: Reading,
  new: Reading,
  buckets: z.array(Bucket).nullable(),
  bucketsAsOf: z.iso.datetime().nullable(),
  source: z.string().describe("Feed the reading came from, chosen by the market day's own resolution rule (see resolution on "
    + '/v1/cities/{slug}): wu = weather.com, the rows of the Weather Underground table a wu rule names; metar = the station\'s METAR '
    + 'reports, which NOAA\'s timeseries shows for a noaa rule (an approximation for a wu rule when the operator chose it); sim = '
    + 'the simulated feed. One day never mixes feeds.'),
  observedAt: z.iso.datetime(),
}).meta({ id: 'IsocastSignalPublic' });

export type SignalPublic = z.infer<typeof IsocastSignalPublic>;

export const SampleSignal = IsocastSignalPublic.extend({
  sample: z.literal(true),
  synthetic: z.boolean(),
  disclaimer: Disclaimer,
}).meta({ id: 'SampleSignal' });

export const SampleQuery = z.object({ city: z.string().optional() });
