import { Hono } from 'hono';
import { getConnInfo } from '@hono/node-server/conninfo';
import { timingSafeEqual, createHash } from 'node:crypto';
import type { AppEnv } from '../lib/http.ts';
import { ApiError } from '../lib/errors.ts';
import type { Metrics } from '../lib/metrics.ts';
import type { RouteDoc } from '../lib/route-doc.ts';
import { ErrorBody } from '../lib/schemas.ts';

/**
 * `/metrics` in Prometheus text format. Revenue and payment counts are business data, so the
 * endpoint is not public: with ADMIN_TOKEN set it needs `Authorization: Bearer <ADMIN_TOKEN>`;
 * without it, only loopback clients (a local Prometheus or node exporter) may scrape.
 */
export function metricsRoutes(deps: { metrics: Metrics; adminToken?: string }): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.get('/metrics', (c) => {
    if (deps.adminToken) {
      if (!bearerMatches(c.req.header('authorization'), deps.adminToken)) throw new ApiError(401, 'admin token required', {}, { 'www-authenticate': 'Bearer' });
    } else if (!isLoopback(c)) {
      throw new ApiError(403, 'metrics are served to loopback clients only unless ADMIN_TOKEN is set');
    }
    return new Response(deps.metrics.render(), { headers: { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' } });
  });
  return app;
}

export function bearerMatches(header: string | undefined, token: string): boolean {
  const m = /^Bearer\s+(.+)$/i.exec(header ?? '');
  if (!m) return false;
  const a = createHash('sha256').update(m[1]!.trim()).digest();
  const b = createHash('sha256').update(token).digest();
  return timingSafeEqual(a, b);
}

function isLoopback(c: Parameters<typeof getConnInfo>[0]): boolean {
  try {
    const addr = getConnInfo(c).remote.address ?? '';
    return addr === '::1' || addr.startsWith('127.') || addr.startsWith('::ffff:127.');
  } catch {
    // Not behind a node socket (in-process app.request): treat as local.
    return true;
  }
}

export const metricsDocs: RouteDoc[] = [{
  method: 'get', path: '/metrics', tags: ['operations'], summary: 'Prometheus metrics (admin token, or loopback only)',
  description: 'With ADMIN_TOKEN set, needs `Authorization: Bearer <ADMIN_TOKEN>`; without it, only loopback clients may scrape.',
  security: [['admin']],
  responses: {
    200: { description: 'Prometheus text exposition format', contentType: 'text/plain' },
    401: { description: 'admin token required', schema: ErrorBody },
    403: { description: 'not a loopback client and no admin token configured', schema: ErrorBody },
  },
}];
