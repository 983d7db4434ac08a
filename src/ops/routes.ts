import { Hono } from 'hono';
import { z } from 'zod';
import type { Db } from '../db/open.ts';
import { createOutboxCounts, type OutboxStatus } from '../delivery/outbox.ts';
import { adminTokenRequired } from '../lib/api-errors.ts';
import { bearerMatches } from '../lib/bearer.ts';
import type { Clock } from '../lib/clock.ts';
import { replyJson, type AppEnv } from '../lib/http.ts';
import type { Metrics } from '../lib/metrics.ts';
import { once } from '../lib/once.ts';
import { routeDoc, type RouteDoc } from '../lib/route-doc.ts';
import { Disclaimer, ErrorBody } from '../lib/schemas.ts';
import { createPaymentReads } from '../payments/store.ts';
import type { SanctionsStatus } from '../sanctions/list.ts';

export const SERVICE_NAME = 'isocast-api';

/** Built on first use: only the documents and tests need it. */
export const Health = once(() =>
  z
    .object({
      ok: z.boolean(),
      service: z.literal(SERVICE_NAME),
      mode: z.enum(['live', 'mock']).describe('Payment plane mode'),
      ofac: z.object({
        listLoaded: z.boolean(),
        extraConfigured: z.boolean(),
        count: z.number().int(),
        ageSeconds: z
          .number()
          .int()
          .nullable()
          .describe('Seconds since the sanctions list file in force was modified; null when none is loaded'),
      }),
      ts: z.iso.datetime(),
      cluster: z
        .record(z.string(), z.unknown())
        .optional()
        .describe(
          'With NATS_URL: role (primary or reader), NATS state; a primary its outbox backlog, a reader its applied stream sequence, lagMs and fresh (docs/operations.md, Scaling out)',
        ),
      disclaimer: Disclaimer,
    })
    .meta({ id: 'Health' }),
);

export function healthRoutes(deps: {
  mode: 'live' | 'mock';
  clock: Clock;
  sanctions(): SanctionsStatus;
  dbOk(): boolean;
  cluster?: () => Record<string, unknown>;
}): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.get('/health', (c) => {
    const ok = deps.dbOk();
    return replyJson(
      c,
      {
        ok,
        service: SERVICE_NAME,
        mode: deps.mode,
        ofac: deps.sanctions(),
        ts: new Date(deps.clock.now()).toISOString(),
        ...(deps.cluster ? { cluster: deps.cluster() } : {}),
      },
      { status: ok ? 200 : 503 },
    );
  });
  return app;
}

export const healthDocs: RouteDoc[] = [
  routeDoc('get /health', 'service', {
    summary: 'Liveness, payment mode and sanctions-list status',
    responses: {
      200: { description: 'Healthy', schema: Health },
      503: { description: 'Database unavailable', schema: Health },
    },
  }),
];

/** Business data: the admin token or 404, with no loopback exception (behind the same-host proxy all is 127.0.0.1). */
export function metricsRoutes(deps: { metrics: Metrics; adminToken?: string }): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.get('/metrics', (c) => {
    if (!deps.adminToken) return replyJson(c, { error: 'not found' }, { status: 404 });
    if (!bearerMatches(c.req.header('authorization'), deps.adminToken)) throw adminTokenRequired();
    return new Response(deps.metrics.render(), {
      headers: { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' },
    });
  });
  return app;
}

export const metricsDocs: RouteDoc[] = [
  routeDoc('get /metrics', 'operations', {
    summary: 'Prometheus metrics (admin token)',
    description:
      'Needs `Authorization: Bearer <ADMIN_TOKEN>`; without ADMIN_TOKEN configured it answers 404, like /admin.',
    security: [['admin']],
    responses: {
      200: { description: 'Prometheus text exposition format', contentType: 'text/plain' },
      401: { description: 'admin token required', schema: ErrorBody },
      404: { description: 'ADMIN_TOKEN is not set: metrics are off', schema: ErrorBody },
    },
  }),
];

/** Read at scrape time from durable state; trigger-kept counters and payments_open keep a scrape flat. */
const OUTBOX_STATUSES: readonly OutboxStatus[] = ['queued', 'sending', 'sent', 'failed'];
const OPEN_PAYMENT_STATUSES = ['claimed', 'settled', 'in_doubt'] as const;

export function registerDbGauges(metrics: Metrics, db: Db, now: () => number = Date.now): void {
  const payments = createPaymentReads(db);
  const outbox = createOutboxCounts(db);

  const refundCount = metrics.gauge(
    'isocast_refunds_queued',
    'Refunds owed for settled payments whose entitlement could not be applied',
  );
  const refundMicro = metrics.gauge('isocast_refunds_queued_micro_usdc', 'Micro-USDC owed by queued refunds');
  const outboxRows = metrics.gauge('isocast_delivery_outbox_rows', 'Delivery outbox rows by status');
  const openPayments = metrics.gauge(
    'isocast_payments_open',
    'Payments claimed, settled or in doubt but not yet applied (in flight, or waiting for the reconciler)',
  );
  const doubtAge = metrics.gauge(
    'isocast_payments_in_doubt_oldest_age_seconds',
    'Age of the oldest payment whose settlement outcome is in doubt (0 when none)',
  );

  metrics.collect(() => {
    const r = payments.queuedRefundTotals();
    refundCount.set(r.n);
    refundMicro.set(r.micro);
    const byStatus = outbox();
    for (const status of OUTBOX_STATUSES) outboxRows.set(byStatus[status], { status });
    const openBy = new Map(payments.openByStatus().map((x) => [x.status, x.n]));
    for (const status of OPEN_PAYMENT_STATUSES) openPayments.set(openBy.get(status) ?? 0, { status });
    const oldest = payments.inDoubt().oldest;
    doubtAge.set(oldest === null ? 0 : Math.max(0, Math.floor((now() - oldest) / 1000)));
  });
}
