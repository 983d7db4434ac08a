import { z } from 'zod';

/** Response pieces every router shares. */
export const Disclaimer = z.string().describe('Informational-only notice with a pointer to the terms');

export const ErrorBody = z.object({
  error: z.string(),
  disclaimer: Disclaimer,
}).loose().meta({ id: 'Error' });

export const Address = z.string().regex(/^0x[0-9a-fA-F]{40}$/);
export const Hex32 = z.string().regex(/^0x[0-9a-fA-F]{64}$/);
