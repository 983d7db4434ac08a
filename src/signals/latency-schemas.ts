import { z } from 'zod';
import { Disclaimer } from '../lib/schemas.ts';
import { once } from '../lib/once.ts';

/** Built on first use: only the documents, the operator page and tests need these shapes. */
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
