import { Hono } from 'hono';
import { z } from 'zod';
import type { AppEnv } from '../lib/http.ts';
import { replyJson } from '../lib/http.ts';
import type { Clock } from '../lib/clock.ts';
import type { RouteDoc } from '../lib/route-doc.ts';
import { Disclaimer } from '../lib/schemas.ts';
import { once } from '../lib/once.ts';
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
  {
    method: 'get',
    path: '/health',
    tags: ['service'],
    summary: 'Liveness, payment mode and sanctions-list status',
    responses: {
      200: { description: 'Healthy', schema: Health },
      503: { description: 'Database unavailable', schema: Health },
    },
  },
];
