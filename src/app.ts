import { Hono } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { bodyLimit } from 'hono/body-limit';
import type { Config } from './config.ts';
import { payTo } from './config.ts';
import type { Db } from './db/open.ts';
import type { Clock } from './lib/clock.ts';
import { ApiError } from './lib/errors.ts';
import type { AppEnv, Ctx } from './lib/http.ts';
import { reply } from './lib/http.ts';
import type { Logger } from './lib/logger.ts';
import { createMetrics, type Metrics } from './lib/metrics.ts';
import { metricsDocs, metricsRoutes } from './ops/metrics-routes.ts';
import { registerDbGauges } from './ops/db-gauges.ts';
import { adminDocs, adminRoutes } from './admin/routes.ts';
import type { PollerHealthInput } from './admin/report.ts';
import type { RouteDoc } from './lib/route-doc.ts';
import type { Catalog, CityRecord } from './cities/catalog.ts';
import { citiesDocs, citiesRoutes } from './cities/routes.ts';
import { healthDocs, healthRoutes } from './health/routes.ts';
import { pricingDocs, pricingRoutes } from './pricing/routes.ts';
import type { SanctionsList } from './sanctions/list.ts';
import { createSignalReader } from './signals/read-store.ts';
import { sampleDocs, sampleRoutes } from './signals/sample-routes.ts';
import { paidSignalsDocs, paidSignalsRoutes } from './signals/paid-routes.ts';
import { paymentPlaneFor } from './payments/plane.ts';
import { subscribeDocs, subscribeRoutes } from './payments/routes.ts';
import type { Settler } from './payments/settlers/settler.ts';
import type { TypedDataVerifier } from './payments/verify.ts';
import { disclaimerText } from './terms/terms.ts';
import { termsDocs, termsRoutes } from './terms/routes.ts';
import { createBotMessenger, type Messenger } from './delivery/messenger.ts';
import { deliveryDocs, deliveryRoutes } from './delivery/routes.ts';
import { discoveryDocs, discoveryRoutes } from './discovery/routes.ts';
import { API_VERSION } from './version.ts';

export type AppDeps = {
  config: Config;
  db: Db;
  catalog: Catalog;
  clock: Clock;
  logger: Logger;
  sanctions: SanctionsList;
  /** Chat bot shared with the delivery worker (one pacing state); built from config if absent. */
  messenger?: Messenger;
  /** Server secret (src/db/secret.ts): keys binding salts. */
  secret: Buffer;
  settler: Settler;
  /** Live mode with RPC_URL: verifies smart-wallet (ERC-1271/6492) payment signatures on chain. */
  chainVerifier?: TypedDataVerifier;
  /** Shared with the poller and workers so /metrics shows them too; a private one if absent. */
  metrics?: Metrics;
  /** The poller's in-memory per-city state for the operator page (main.ts passes poller.health). */
  pollerHealth?: () => PollerHealthInput;
  /** The real event page once the poller has seen the city-day's event (main.ts passes poller.marketUrlFor). */
  marketUrlFor?: (city: CityRecord, date: string) => string | null;
};

/** Request bodies are small JSON objects; anything larger is refused before it is read. */
export const MAX_BODY_BYTES = 16 * 1024;

/** Every route the app serves, for the OpenAPI document and the 405 check. */
export const ROUTE_DOCS: RouteDoc[] = [...healthDocs, ...citiesDocs, ...sampleDocs, ...pricingDocs, ...termsDocs, ...deliveryDocs, ...metricsDocs, ...adminDocs, ...subscribeDocs, ...paidSignalsDocs, ...discoveryDocs];

/** Builds the HTTP app. It never listens, opens files or starts timers: main.ts does. */
export function createApp(deps: AppDeps): Hono<AppEnv> {
  const { config, db, catalog, clock, logger } = deps;
  const disclaimer = disclaimerText(config.TERMS_URL);
  const signals = createSignalReader(db);
  const isCity = (slug: string) => catalog.get(slug) !== undefined;
  const dbPing = db.prepare('SELECT 1');

  const metrics = deps.metrics ?? createMetrics();
  const latency = metrics.histogram('isocast_http_request_duration_seconds', 'HTTP request latency by route pattern and status',
    [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10]);
  registerDbGauges(metrics, db);

  const app = new Hono<AppEnv>();
  const limitBody = bodyLimit({
    maxSize: MAX_BODY_BYTES,
    onError: (c) => reply(c as Ctx, { error: `request body larger than ${MAX_BODY_BYTES} bytes` }, 413),
  });
  // One middleware, not three: each layer costs a closure and a compose step on every request,
  // a measurable share of a cached read.
  app.use('*', (c, next) => {
    c.set('disclaimer', disclaimer);
    const started = performance.now();
    const observe = (refused: unknown) => {
      // Route patterns, not raw paths, keep the label set bounded whatever clients send.
      const route = c.req.routePath === '/*' || c.req.routePath === '*' ? 'unmatched' : c.req.routePath;
      const res = refused instanceof Response ? refused : c.res;
      latency.observe((performance.now() - started) / 1000, { method: c.req.method, route, status: String(res.status) });
      return refused instanceof Response ? refused : undefined;
    };
    // GET and HEAD never carry a body here (the node adapter drops it), and asking for one makes
    // the adapter build a full fetch Request per call. No async frame: this runs on every request.
    if (c.req.method === 'GET' || c.req.method === 'HEAD') return next().then(observe);
    return Promise.resolve(limitBody(c, next)).then(observe);
  });

  app.route('/', healthRoutes({
    mode: config.PAYMENT_MODE, clock, sanctions: () => deps.sanctions.status(),
    dbOk: () => { try { dbPing.get(); return true; } catch { return false; } },
  }));
  app.route('/', citiesRoutes({ catalog, clock, latestSeqAll: signals.latestSeqAll, latestSeq: signals.latestSeq, marketUrlFor: deps.marketUrlFor }));
  app.route('/', sampleRoutes({ isCity, payload: signals.payload }));
  app.route('/', pricingRoutes({ payTo: payTo(config), isCity, latestSeq: signals.latestSeq }));
  app.route('/', termsRoutes({ termsUrl: config.TERMS_URL }));
  const messenger = deps.messenger ?? createBotMessenger({ token: config.MESSENGER_BOT_TOKEN, apiUrl: config.MESSENGER_API_URL });
  app.route('/', deliveryRoutes({ db, catalog, clock, logger, messenger, termsUrl: config.TERMS_URL }));
  const plane = paymentPlaneFor({ ...deps, metrics });
  app.route('/', subscribeRoutes({ plane, isCity }));
  app.route('/', paidSignalsRoutes({ db, plane, reader: signals, sanctions: deps.sanctions, isCity }));
  app.route('/', metricsRoutes({ metrics, adminToken: config.ADMIN_TOKEN }));
  app.route('/', adminRoutes({ db, catalog, clock, adminToken: config.ADMIN_TOKEN, paymentMode: config.PAYMENT_MODE, feed: config.FEED, pollerHealth: deps.pollerHealth }));
  app.route('/', discoveryRoutes({
    docs: ROUTE_DOCS, baseUrl: config.BASE_URL, termsUrl: config.TERMS_URL, apiVersion: API_VERSION, disclaimer,
    paymentMode: config.PAYMENT_MODE, payTo: payTo(config), usdc: config.USDC_ADDRESS, cities: catalog.active,
  }));

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
