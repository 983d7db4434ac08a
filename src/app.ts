import { Hono } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { Config } from './config.ts';
import { payTo } from './config.ts';
import type { Db } from './db/open.ts';
import type { Clock } from './lib/clock.ts';
import { ApiError } from './lib/errors.ts';
import type { AppEnv, Ctx } from './lib/http.ts';
import { reply } from './lib/http.ts';
import type { Logger } from './lib/logger.ts';
import type { RouteDoc } from './lib/route-doc.ts';
import type { Catalog } from './cities/catalog.ts';
import { citiesDocs, citiesRoutes } from './cities/routes.ts';
import { healthDocs, healthRoutes } from './health/routes.ts';
import { pricingDocs, pricingRoutes } from './pricing/routes.ts';
import type { SanctionsList } from './sanctions/list.ts';
import { createSignalReader } from './signals/read-store.ts';
import { sampleDocs, sampleRoutes } from './signals/sample-routes.ts';
import { disclaimerText } from './terms/terms.ts';
import { termsDocs, termsRoutes } from './terms/routes.ts';

export type AppDeps = {
  config: Config;
  db: Db;
  catalog: Catalog;
  clock: Clock;
  logger: Logger;
  sanctions: SanctionsList;
};

/** Every route the app serves, for the OpenAPI document and the 405 check. */
export const ROUTE_DOCS: RouteDoc[] = [...healthDocs, ...citiesDocs, ...sampleDocs, ...pricingDocs, ...termsDocs];

/** Builds the HTTP app. It never listens, opens files or starts timers: main.ts does. */
export function createApp(deps: AppDeps): Hono<AppEnv> {
  const { config, db, catalog, clock, logger } = deps;
  const disclaimer = disclaimerText(config.TERMS_URL);
  const signals = createSignalReader(db);
  const isCity = (slug: string) => catalog.get(slug) !== undefined;
  const dbPing = db.prepare('SELECT 1');

  const app = new Hono<AppEnv>();
  app.use('*', async (c, next) => {
    c.set('disclaimer', disclaimer);
    await next();
  });

  app.route('/', healthRoutes({
    mode: config.PAYMENT_MODE, clock, sanctions: () => deps.sanctions.status(),
    dbOk: () => { try { dbPing.get(); return true; } catch { return false; } },
  }));
  app.route('/', citiesRoutes({ catalog, clock, latestSeqAll: signals.latestSeqAll, latestSeq: signals.latestSeq }));
  app.route('/', sampleRoutes({ isCity, payload: signals.payload }));
  app.route('/', pricingRoutes({ payTo: payTo(config), isCity, latestSeq: signals.latestSeq }));
  app.route('/', termsRoutes({ termsUrl: config.TERMS_URL }));

  const methodsByPath = routeMatchers(ROUTE_DOCS);
  app.notFound((c) => {
    const allowed = methodsByPath.filter((m) => m.re.test(c.req.path)).flatMap((m) => m.methods);
    if (allowed.length > 0) {
      const allow = [...new Set(allowed.flatMap((m) => (m === 'GET' ? ['GET', 'HEAD'] : [m])))].join(', ');
      return reply(c as Ctx, { error: `method ${c.req.method} not allowed; use ${allow}` }, 405, { allow });
    }
    return reply(c as Ctx, { error: 'not found' }, 404);
  });

  app.onError((err, c) => {
    if (err instanceof ApiError) return reply(c as Ctx, { error: err.message, ...err.extra }, err.status, err.headers);
    if (err instanceof HTTPException) {
      const status = err.status;
      if (status >= 500) logger.error('request failed', { path: c.req.path, err });
      return reply(c as Ctx, { error: err.message || 'request rejected' }, status);
    }
    logger.error('unhandled error', { method: c.req.method, path: c.req.path, err });
    return reply(c as Ctx, { error: 'internal error' }, 500);
  });

  return app;
}

function routeMatchers(docs: RouteDoc[]): { re: RegExp; methods: string[] }[] {
  const byPath = new Map<string, string[]>();
  for (const d of docs) byPath.set(d.path, [...(byPath.get(d.path) ?? []), d.method.toUpperCase()]);
  return [...byPath].map(([path, methods]) => ({
    re: new RegExp('^' + path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}|\{[^}]+\}/g, '[^/]+') + '/?$'),
    methods,
  }));
}
