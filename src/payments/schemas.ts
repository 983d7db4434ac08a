import { z } from 'zod';
import { once } from '../lib/once.ts';
import { MarketResolution } from '../cities/schemas.ts';
import { Address, Disclaimer, Hex32 } from '../lib/schemas.ts';
import { signalSchema } from '../signals/schemas.ts';
import { BINDING_FORMULA, SALT_ECHO } from '../../packages/isocast-client/src/binding.ts';
import { MAX_WAIT_S } from './bundle.ts';
import { NETWORK } from '../x402/networks.ts';

/** The payment routes' documented shapes, built on first use: documents and listings need them, no request does. */
export const paymentSchemas = once(() => {
  const Binding = z
    .object({
      formula: z.literal(BINDING_FORMULA),
      citySlug: z.string(),
      count: z.number().int(),
      salt: Hex32.describe(
        "Server-derived: HMAC of (city, count, the bundle's purchase step, the current minute). Bind the nonce to it; it moves after every settled purchase of this bundle and every minute, so buying the same bundle again takes a new 402",
      ),
      saltEcho: z
        .literal(SALT_ECHO)
        .describe(
          'Optional: a client may return `salt` beside signature and authorization in the X-Payment PaymentPayload; without it the server finds the salt itself',
        ),
    })
    .meta({ id: 'Binding' });

  const PaymentMode = z
    .enum(['live', 'mock'])
    .describe('mock: a demo instance; signatures are verified but no money moves and nothing is for sale');

  const PaymentRequirement = z
    .object({
      scheme: z.literal('exact'),
      network: z.literal(NETWORK),
      price: z
        .string()
        .regex(/^\$\d+\.\d+$/)
        .describe('USD price, `$<amount>`'),
      payTo: Address,
      description: z.string(),
      mimeType: z.literal('application/json'),
      maxAmountRequired: z.string().regex(/^\d+$/).describe('Atomic USDC units (6 decimals), x402 v1'),
      asset: Address.describe('USDC token contract'),
      resource: z.url(),
      maxTimeoutSeconds: z.number().int(),
      extra: z.object({ name: z.literal('USD Coin'), version: z.literal('2'), binding: Binding, mode: PaymentMode }),
    })
    .meta({ id: 'PaymentRequirement' });

  const PaymentRequired = z
    .object({
      x402Version: z.literal(1),
      error: z.string(),
      accepts: z.array(PaymentRequirement),
      extra: z.object({ binding: Binding, mode: PaymentMode }),
      terms: z.url(),
      paid_through: z.number().int().optional().describe('Only on /v1/signals exhaustion'),
      latest: z.number().int().optional().describe('Only on /v1/signals exhaustion'),
      idempotent: z
        .literal(true)
        .optional()
        .describe(
          'Only on /v1/signals with an X-Payment already applied: the payment stands (nothing charged again), but only the request that settled it reads rows',
        ),
      receipt: z
        .string()
        .optional()
        .describe(
          'With idempotent: how to read instead (the bearer token; a lost one comes back from POST /v1/receipts)',
        ),
      disclaimer: Disclaimer,
    })
    .meta({ id: 'PaymentRequired' });

  const SubscribeResult = z
    .object({
      ok: z.literal(true),
      city: z.string(),
      count: z.number().int(),
      unitPriceUsd: z.number(),
      amountUsd: z.number(),
      latestSeq: z.number().int(),
      paidThroughSeq: z.number().int().describe('Entitlement ceiling after the purchase'),
      receiptToken: z
        .string()
        .optional()
        .describe(
          'Opaque bearer token (isocast-receipt) for GET /v1/signals. Issued once, only in the answer to the request whose settlement moved the money; absent on an idempotent replay, on a payment resolved after being in doubt, and on an authorization found already used on chain. Recover one with POST /v1/receipts',
        ),
      txHash: z.string().nullable(),
      idempotent: z.boolean().describe('True when this settlement was already applied'),
      resolutionMetadata: MarketResolution()
        .optional()
        .describe(
          'What the bought market resolves on (station, unit, rule kind, rounding, source and its page), as GET /v1/cities/{slug} says',
        ),
      disclaimer: Disclaimer,
    })
    .meta({ id: 'SubscribeResult' });

  const SubscribeQuery = z.object({
    city: z.string().describe('City slug'),
    count: z.string().describe('Bundle size: an integer of at least 2'),
  });

  const errorWith = (id: string, extra: z.ZodRawShape) =>
    z
      .object({ error: z.string(), ...extra, disclaimer: Disclaimer })
      .loose()
      .meta({ id });
  const MinSpendError = errorWith('MinSpendError', { minSpendUsd: z.number() });
  const SettlementFailed = errorWith('SettlementFailed', { reason: z.string() });
  const RefundQueued = errorWith('RefundQueued', { refund: z.literal('queued') });
  const SettlementPending = z
    .object({
      error: z.literal('settlement pending — retry the same X-Payment; you will not be charged twice'),
      retryAfterSeconds: z.number().int(),
      disclaimer: Disclaimer,
    })
    .meta({ id: 'SettlementPending' });

  const SignalsQuery = z.object({
    city: z.string().describe('City slug'),
    since: z.string().optional().describe('Cursor (integer >= 0, default 0): signals with seq strictly greater'),
    count: z.string().optional().describe('Bundle size (integer >= 2, default 20) proposed in a 402 challenge'),
    wait: z
      .string()
      .optional()
      .describe(
        `Long-poll (extension; integer 0..${MAX_WAIT_S} seconds): with a receipt bearer or a sign-in, hold the request until an entitled signal past since exists or wait elapses, then answer as without it. Absent: answer at once`,
      ),
  });

  const SignalsPage = z
    .object({
      signals: z.array(signalSchema()),
      next_cursor: z.number().int(),
      paid_through: z.number().int(),
      latest: z.number().int(),
      more: z.boolean(),
      disclaimer: Disclaimer,
    })
    .meta({ id: 'SignalsPage' });

  return {
    PaymentRequired,
    SubscribeResult,
    SubscribeQuery,
    MinSpendError,
    SettlementFailed,
    RefundQueued,
    SettlementPending,
    SignalsQuery,
    SignalsPage,
  };
});

type PaymentSchemas = ReturnType<typeof paymentSchemas>;
export type PaymentRequiredBody = Omit<z.infer<PaymentSchemas['PaymentRequired']>, 'disclaimer'>;
export type SubscribeResultBody = Omit<z.infer<PaymentSchemas['SubscribeResult']>, 'disclaimer'>;
