import { Hono } from 'hono';
import { bearerMatches } from '../lib/bearer.ts';
import { replyJson, type AppEnv } from '../lib/http.ts';
import { adminTokenRequired } from '../lib/api-errors.ts';
import type { Metrics } from '../lib/metrics.ts';
import type { RouteDoc } from '../lib/route-doc.ts';
import { ErrorBody } from '../lib/schemas.ts';

/**
 * Revenue and payment counts are business data: the admin token or 404, as `/admin`. No loopback
 * exception: behind the documented same-host proxy every request comes from 127.0.0.1.
 */
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
  {
    method: 'get',
    path: '/metrics',
    tags: ['operations'],
    summary: 'Prometheus metrics (admin token)',
    description:
      'Needs `Authorization: Bearer <ADMIN_TOKEN>`; without ADMIN_TOKEN configured it answers 404, like /admin.',
    security: [['admin']],
    responses: {
      200: { description: 'Prometheus text exposition format', contentType: 'text/plain' },
      401: { description: 'admin token required', schema: ErrorBody },
      404: { description: 'ADMIN_TOKEN is not set: metrics are off', schema: ErrorBody },
    },
  },
];
