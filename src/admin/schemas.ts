import { z } from 'zod';
import { Disclaimer } from '../lib/schemas.ts';
import { once } from '../lib/once.ts';
import { LatencyWindowSchema } from '../signals/schemas.ts';

/** `GET /admin/data.json`: money in integer micro-USDC with USD beside it; times ISO 8601 (null: never happened). */
function buildAdminData() {
  const int = () => z.number().int();
  const Iso = z.string().describe('ISO 8601 date-time');
  const IsoOrNull = Iso.nullable();

  const RevenueDay = z.object({
    day: z.string().describe('UTC day the payment was made, YYYY-MM-DD'),
    city: z.string(),
    payments: int(),
    micro: int(),
    usd: z.number(),
  });

  const PaymentItem = z.object({
    id: int(),
    createdAt: Iso,
    wallet: z.string(),
    city: z.string(),
    count: int(),
    amountMicro: int(),
    amountUsd: z.number(),
    settler: z.string(),
    txHash: z.string().nullable(),
    status: z.enum(['claimed', 'settled', 'applied', 'failed', 'refund_queued', 'in_doubt']),
    error: z.string().nullable(),
  });

  const RefundItem = z.object({
    id: int(),
    paymentId: int(),
    createdAt: Iso,
    wallet: z.string(),
    amountMicro: int(),
    amountUsd: z.number(),
    txHash: z.string().nullable(),
    reason: z.string(),
    status: z.string(),
  });

  const EntitlementItem = z.object({
    wallet: z.string(),
    city: z.string(),
    paidThroughSeq: int(),
    totalPaidSignals: int(),
    latestSeq: int(),
    updatedAt: Iso,
  });

  const DeliveryItem = z.object({
    id: int(),
    wallet: z.string(),
    city: z.string(),
    targetDate: z.string(),
    bucket: z.string(),
    seq: int(),
    status: z.enum(['queued', 'sending', 'sent', 'failed']),
    attempts: int(),
    lastError: z.string().nullable(),
    updatedAt: Iso,
  });

  const CityHealth = z.object({
    city: z.string(),
    displayName: z.string(),
    latestSeq: int(),
    lastReading: z
      .object({ targetDate: z.string(), high: z.number(), unit: z.string(), bucket: z.string().nullable(), at: Iso })
      .nullable(),
    lastAttemptAt: IsoOrNull,
    lastOkAt: IsoOrNull,
    lastError: z.string().nullable(),
    lastErrorAt: IsoOrNull,
    failures: int().describe('consecutive failed polls; 0 when not backing off'),
    retryAt: IsoOrNull.describe('next attempt while backing off'),
    noMarket: z.boolean(),
    rule: z
      .object({
        targetDate: z.string(),
        source: z.string().describe("wu, noaa, hko, cwa or unknown, from the market's own rule text"),
        station: z.string().nullable(),
        unit: z.string().nullable(),
        precision: z.number().nullable(),
        fallback: z.string().nullable(),
        status: z.enum(['ok', 'paused']),
        reason: z.string().nullable(),
        observedWith: z.string().nullable(),
      })
      .nullable()
      .describe('parsed resolution rule of the newest market day the poller has read'),
  });

  return z
    .object({
      generatedAt: Iso,
      paymentMode: z.enum(['mock', 'live']),
      feed: z.enum(['sim', 'live']),
      totals: z.object({
        revenueMicro: int(),
        revenueUsd: z.number(),
        appliedPayments: int(),
        refundsQueued: int(),
        refundsQueuedMicro: int(),
        inDoubtPayments: int().describe(
          'Payments whose settlement outcome is not yet known; the reconciler asks the token contract',
        ),
        oldestInDoubtSeconds: int().nullable().describe('Age of the oldest in-doubt payment, null when there is none'),
        signals: int(),
        entitlements: int(),
      }),
      revenueByDay: z.array(RevenueDay).describe('applied payments per UTC day and city, last 30 days'),
      recentPayments: z.array(PaymentItem),
      refunds: z.array(RefundItem).describe('queued refunds, oldest first'),
      entitlements: z.array(EntitlementItem).describe('most recently changed first'),
      deliveries: z.object({
        counts: z.object({
          queued: int(),
          sending: int(),
          sent: int(),
          failed: int(),
        }),
        recent: z.array(DeliveryItem).describe('newest outbox rows first, with their current status'),
      }),
      poller: z.object({
        running: z.boolean().describe('false when this process has no poller wired in'),
        lastTick: z.object({ startedAt: Iso, durationMs: z.number(), signals: int(), errors: int() }).nullable(),
        cities: z.array(CityHealth),
        paused: z
          .array(z.object({ city: z.string(), displayName: z.string(), targetDate: z.string(), reason: z.string() }))
          .describe(
            'cities whose newest market day is paused: its rule does not match the catalog or cannot be observed',
          ),
      }),
      replication: z
        .object({
          replica: z.string().describe('where the database is replicated, without credentials'),
          up: z.boolean().describe('the litestream process is running'),
          lagMs: int().describe('age of the oldest commit not yet on the replica'),
          lastSyncAt: IsoOrNull.describe('last upload Litestream finished'),
          failures: int().describe('Litestream errors and exits since this process started'),
          lastError: z.string().nullable(),
        })
        .nullable()
        .describe('null when REPLICA_URL is unset (docs/operations.md, Durability)'),
      facilitators: z
        .array(
          z.object({
            name: z.string().describe('the facilitator URL, credentials and keys redacted'),
            up: z
              .boolean()
              .describe('false once a payment skipped it (unreachable, 5xx on /verify, nothing we need in /supported)'),
            reason: z.string().nullable().describe('why it was last skipped'),
            downSince: IsoOrNull,
            answered: int().describe('payments it answered since this process started'),
            skipped: int().describe('payments that skipped it for the next facilitator'),
          }),
        )
        .describe('each FACILITATOR_URL entry in order (live mode, SETTLEMENT=facilitator); empty otherwise'),
      discovery: z
        .object({
          at: Iso.nullable().describe('when the last discovery run was recorded; null before the first'),
          selection: z.string().describe('CITIES: spec, all, or the slug list'),
          events: int().describe(
            'daily-high and daily-low events Gamma listed (tag_slug=highest-temperature and tag_slug=lowest-temperature)',
          ),
          served: z.array(z.string()).describe('the streams served now: exactly what /v1/cities lists'),
          notServed: z
            .array(
              z.object({
                city: z
                  .string()
                  .describe('the stream the event would feed: `nyc` for a daily high, `nyc-low` for a low'),
                kind: z.enum(['high', 'low']).describe("the event's extreme, from its slug"),
                targetDate: z.string(),
                slug: z.string(),
                reason: z.string(),
              }),
            )
            .describe('discovered events whose stream is not served, with the reason'),
          notServedByReason: z
            .array(z.object({ reason: z.string(), count: int(), cities: z.array(z.string()) }))
            .describe('notServed grouped: one entry per reason with how many streams share it, most common first'),
        })
        .describe('what discovery found on the market and what of it is served'),
      latency: z
        .array(LatencyWindowSchema())
        .describe('the figures of GET /v1/stats/latency (24 h and 7 days), computed for this request'),
      disclaimer: Disclaimer,
    })
    .meta({ id: 'AdminData' });
}

/** Built on first use: only the OpenAPI document and the tests read it. */
export const adminData = once(buildAdminData);

export type AdminDataBody = Omit<z.infer<ReturnType<typeof buildAdminData>>, 'disclaimer'>;

export const AdminAssetParams = z.object({ file: z.string() });
