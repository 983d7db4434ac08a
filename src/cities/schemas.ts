import { z } from 'zod';
import { Disclaimer } from '../lib/schemas.ts';

export const CityPublic = z.object({
  slug: z.string(),
  displayName: z.string(),
  country: z.string().nullable(),
  unit: z.string().describe('Temperature unit, C or F'),
  bucketWidth: z.number().describe('Bucket width in the city unit'),
  timezone: z.string().describe('IANA timezone of the market day'),
  resolutionSource: z.string(),
  station: z.string().nullable(),
  latestSeq: z.number().int().describe('Highest published signal seq for the city'),
}).meta({ id: 'City' });

export const CityListQuery = z.object({
  sort: z.enum(['recent']).optional()
    .describe('recent: cities whose latest signal is newest come first (cities without a signal last): where signals are flowing right now'),
});

export const CityList = z.object({ cities: z.array(CityPublic), count: z.number().int(), disclaimer: Disclaimer }).meta({ id: 'CityList' });

export const CityDetail = z.object({
  city: CityPublic,
  targetDate: z.string().describe('City-local market day, YYYY-MM-DD'),
  marketUrl: z.url(),
  disclaimer: Disclaimer,
}).meta({ id: 'CityDetail' });

export const CityParams = z.object({ slug: z.string().describe('City slug') });
