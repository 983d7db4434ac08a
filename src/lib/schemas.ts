import { z } from 'zod';
import { ERRORS } from './api-errors.ts';

export const Disclaimer = z.string().describe('Informational-only notice with a pointer to the terms');

export const ErrorBody = z
  .object({
    error: z.string(),
    disclaimer: Disclaimer,
  })
  .loose()
  .meta({ id: 'Error' });

/** 429 from the abuse limits (src/limits/limits.ts); `Retry-After` carries the same seconds. */
export const RATE_LIMITED_DOC = {
  description: 'Too many requests from this address or wallet; retry after Retry-After seconds',
  schema: z
    .object({
      error: z.literal(ERRORS.rate_limited.message),
      retryAfterSeconds: z.number().int().min(1),
      disclaimer: Disclaimer,
    })
    .meta({ id: 'RateLimited' }),
  headers: { 'Retry-After': 'seconds' },
};

export const Address = z.string().regex(/^0x[0-9a-fA-F]{40}$/);
export const Hex32 = z.string().regex(/^0x[0-9a-fA-F]{64}$/);
