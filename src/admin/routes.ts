import { Hono } from 'hono';
import type { Clock } from '../lib/clock.ts';
import { adminTokenRequired } from '../lib/api-errors.ts';
import { type AppEnv, replyJson } from '../lib/http.ts';
import { serveStaticPage } from '../lib/static-page.ts';
import { type RouteDoc, routeDoc } from '../lib/route-doc.ts';
import { ErrorBody } from '../lib/schemas.ts';
import { bearerMatches } from '../lib/bearer.ts';
import { createAdminReport, type ReportDeps } from './report.ts';
import { AdminAssetParams, adminData } from './schemas.ts';

/**
 * Without ADMIN_TOKEN every admin path is the unknown path's 404. With it, `/admin` is a static shell with
 * no data that sends the token (kept in sessionStorage) as a Bearer to `/admin/data.json`: never in a URL,
 * a cookie or an access log.
 */
const PRIVATE = { 'cache-control': 'no-store', 'referrer-policy': 'no-referrer', 'x-content-type-options': 'nosniff' };

export function adminRoutes(deps: ReportDeps & { adminToken?: string; clock: Clock }): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const token = deps.adminToken;
  const report = createAdminReport(deps);

  // `/admin/*` matches `/admin` itself too.
  app.use('/admin/*', async (c, next) => {
    if (!token) return replyJson(c, { error: 'not found' }, { status: 404 });
    await next();
  });
  serveStaticPage(app, { path: '/admin', name: 'admin', headers: PRIVATE });
  app.get('/admin/data.json', (c) => {
    if (!bearerMatches(c.req.header('authorization'), token!)) throw adminTokenRequired();
    return replyJson(c, report(deps.clock.now()), { headers: PRIVATE });
  });
  return app;
}

const notEnabled = { description: 'ADMIN_TOKEN is not set: the operator page is off', schema: ErrorBody };

export const adminDocs: RouteDoc[] = [
  routeDoc('get /admin', 'operations', {
    summary: 'Operator page (only when ADMIN_TOKEN is set)',
    description: 'A static page that asks for the admin token and loads /admin/data.json with it.',
    responses: { 200: { description: 'HTML page', contentType: 'text/html' }, 404: notEnabled },
  }),
  routeDoc('get /admin/assets/{file}', 'operations', {
    summary: 'Stylesheet and script of the operator page',
    params: AdminAssetParams,
    responses: {
      200: { description: 'The asset (text/css or text/javascript)', contentType: 'text/plain' },
      404: { description: 'not found, or the page is off', schema: ErrorBody },
    },
  }),
  routeDoc('get /admin/data.json', 'operations', {
    summary: 'Operator data: revenue, payments, refunds, entitlements, deliveries, poller health',
    description: 'Needs `Authorization: Bearer <ADMIN_TOKEN>`.',
    security: [['admin']],
    responses: {
      200: { description: 'Operator data', schema: adminData },
      401: { description: 'admin token required', schema: ErrorBody },
      404: notEnabled,
    },
  }),
];
