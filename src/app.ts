import { Hono } from 'hono';
import { LinearRouter } from 'hono/router/linear-router';
import { HTTPException } from 'hono/http-exception';
import { bodyLimit } from 'hono/body-limit';
import { METHODS } from 'node:http';
import type { Config } from './config.ts';
import { payTo } from './payments/pay-to.ts';
import type { Db } from './db/open.ts';
import type { Stores } from './stores.ts';
import type { Clock } from './lib/clock.ts';
import { ApiError } from './lib/errors.ts';
import type { AppEnv, Ctx } from './lib/http.ts';
import { replyJson } from './lib/http.ts';
import type { Logger } from './lib/logger.ts';
import { createMetrics, type Metrics } from './lib/metrics.ts';
import { healthDocs, healthRoutes, metricsDocs, metricsRoutes, registerDbGauges } from './ops/routes.ts';
import { adminDocs, adminRoutes } from './admin/routes.ts';
import type { ReportDeps } from './admin/report.ts';
import type { Poller } from './poller/poller.ts';
import type { RouteDoc } from './lib/route-doc.ts';
import type { Catalog } from './cities/catalog.ts';
import { citiesDocs, citiesRoutes, resolutionFor } from './cities/routes.ts';
import { pricingDocs, pricingRoutes } from './pricing/routes.ts';
import type { SanctionsList } from './sanctions/list.ts';
import { signalsDocs, signalsRoutes } from './signals/routes.ts';
import { paidSignalsDocs, paidSignalsRoutes } from './paywall/paid-routes.ts';
import { paymentPlaneFor, type PaymentPlane } from './payments/plane.ts';
import { subscribeDocs, subscribeRoutes } from './paywall/routes.ts';
import { receiptDocs, receiptRoutes } from './paywall/receipt-routes.ts';
import type { Settler } from './payments/settlers/settler.ts';
import { facilitatorHealthOf } from './payments/settlers/failover.ts';
import type { TypedDataVerifier } from './payments/verify.ts';
import { createSiwxSignIn, SIWX_HEADER } from './payments/siwx.ts';
import { PAYMENT_SIGNATURE } from './x402/v2.ts';
import { disclaimerText } from './terms/terms.ts';
import { termsDocs, termsRoutes } from './terms/routes.ts';
import { createBotMessenger, type Messenger } from './delivery/messenger.ts';
import { deliveryDocs, deliveryRoutes } from './delivery/routes.ts';
import { sanctionsScreen } from './delivery/screen.ts';
import { discoveryDocs, discoveryRoutes } from './discovery/routes.ts';
import { API_VERSION } from './version.ts';
import { createEdge, type NodeBindings, routeTable } from './lib/edge.ts';
import { abuseLimitsFromConfig, type AbuseLimits, limitedRoute } from './limits/limits.ts';
import { bodyLimitIfDeclared, wrapFetch } from './lib/fast-path.ts';
import type { ClusterParts } from './cluster/start.ts';

type AppDeps = {
  config: Config;
  db: Db;
  /** Built once for `db` (src/stores.ts), shared with the poller and the delivery worker. */
  stores: Stores;
  catalog: Catalog;
  clock: Clock;
  /** The clock whose local dates are market days: the simulated feed's fast clock (FEED=sim), else `clock`. */
  dayClock?: Clock;
  logger: Logger;
  sanctions: SanctionsList;
  /** Chat bot shared with the delivery worker (one pacing state); built from config if absent. */
  messenger?: Messenger;
  /** Server secret (src/db/files.ts): keys binding salts. */
  secret: Buffer;
  settler: Settler;
  /** Live mode with RPC_URL: verifies smart-wallet (ERC-1271/6492) payment and sign-in signatures on chain. */
  chainVerifier?: TypedDataVerifier;
  /** main.ts shares one plane with the reconciler and the shutdown; built here if absent. */
  plane?: PaymentPlane;
  /** Shared with the poller and workers so /metrics shows them too; a private one if absent. */
  metrics?: Metrics;
  /** The poller's state for /admin, and its event pages and current rules for the city routes (serve.ts). */
  pollerHealth?: Poller['health'];
  marketUrlFor?: Poller['marketUrlFor'];
  ruleFor?: Poller['ruleFor'];
  /** The replica's state for /admin (main.ts, when REPLICA_URL is set). */
  replication?: ReportDeps['replication'];
  /** Abuse limits (src/limits/limits.ts); built from config if absent. Exposed on the app as `limits`. */
  limits?: AbuseLimits;
  /** Read nodes (src/cluster/start.ts): the reader's forwarding, the single-use check across nodes, /health. */
  cluster?: Pick<ClusterParts, 'middleware' | 'crossNode' | 'health'> | null;
};

/** A read whose credential costs a signature recovery: either payment header, or a wallet sign-in. */
const signedRead = (h: Headers) => h.has('x-payment') || h.has(PAYMENT_SIGNATURE) || h.has(SIWX_HEADER);

/** A body-read error the client caused (HPE_* parse codes, a reset mid-body): a 400, never a server error. */
const CLIENT_CODE = /^(HPE_.*|ECONNRESET|ECONNABORTED|EPIPE|ERR_STREAM_PREMATURE_CLOSE|ABORT_ERR|UND_ERR_ABORTED)$/s;

function isClientAbort(err: unknown): boolean {
  for (let e = err, depth = 0; e instanceof Error && depth < 4; e = (e as Error & { cause?: unknown }).cause, depth++) {
    const code = (e as Error & { code?: unknown }).code;
    if (typeof code === 'string' && CLIENT_CODE.test(code)) return true;
    if (e.name === 'AbortError' || e.message === 'aborted' || e.message === 'terminated') return true;
  }
  return false;
}

/** Request bodies are small JSON objects; anything larger is refused before it is read. */
export const MAX_BODY_BYTES = 16 * 1024;

/** Methods that may carry a body (CONNECT never reaches the app): each passes the body limit. */
const BODY_METHODS = METHODS.filter((m) => m !== 'GET' && m !== 'HEAD' && m !== 'CONNECT');

/** Every route the app serves, for the OpenAPI document and the 405 check. */
export const ROUTE_DOCS: RouteDoc[] = [
  ...healthDocs,
  ...citiesDocs,
  ...signalsDocs,
  ...pricingDocs,
  ...termsDocs,
  ...deliveryDocs,
  ...metricsDocs,
  ...adminDocs,
  ...subscribeDocs,
  ...receiptDocs,
  ...paidSignalsDocs,
  ...discoveryDocs,
];

/** Builds the HTTP app. It never listens, opens files or starts timers: main.ts does. */
export function createApp(deps: AppDeps): Hono<AppEnv> & { limits: AbuseLimits } {
  const { config, db, stores, catalog, clock, logger } = deps;
  const disclaimer = disclaimerText(config.TERMS_URL);
  const signals = stores.reader;
  const isCity = (slug: string) => catalog.get(slug) !== undefined;
  const dbPing = db.prepare('SELECT 1');

  const metrics = deps.metrics ?? createMetrics();
  const latency = metrics.histogram(
    'isocast_http_request_duration_seconds',
    'HTTP request latency by route pattern and status',
    [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
  );
  registerDbGauges(metrics, db, () => clock.now());
  // Monotonic, not the app clock: a limit is about real request rates, and wall time can jump.
  const limits = deps.limits ?? abuseLimitsFromConfig(config, { now: () => performance.now(), disclaimer, metrics });

  // A linear scan of the 64 routes: Hono's RegExpRouter compiles them at the first match, 2.5 ms of
  // every start, to save 1.3 µs per request (docs/performance.md, "Issue 39, fifth round").
  const app = new Hono<AppEnv>({ router: new LinearRouter() });
  const limitBody = bodyLimit({
    maxSize: MAX_BODY_BYTES,
    onError: (c) => replyJson(c as Ctx, { error: `request body larger than ${MAX_BODY_BYTES} bytes` }, { status: 413 }),
  });
  // Every method but GET and HEAD: the node adapter never gives those a body, so GET routes keep one handler.
  app.on(BODY_METHODS, '*', bodyLimitIfDeclared(limitBody));
  if (deps.cluster?.middleware) app.use('*', deps.cluster.middleware);

  app.route(
    '/',
    healthRoutes({
      mode: config.PAYMENT_MODE,
      clock,
      sanctions: () => deps.sanctions.status(clock.now()),
      cluster: deps.cluster?.health,
      dbOk: () => {
        try {
          dbPing.get();
          return true;
        } catch {
          return false;
        }
      },
    }),
  );
  app.route(
    '/',
    citiesRoutes({
      ...deps,
      dayClock: deps.dayClock ?? clock,
      latestSeqAll: signals.latestSeqAll,
      latestAtAll: signals.latestAtAll,
      latestSeq: signals.latestSeq,
    }),
  );
  app.route('/', signalsRoutes({ reader: signals, isCity, clock }));
  app.route('/', pricingRoutes({ payTo: payTo(config), isCity, latestSeq: signals.latestSeq }));
  app.route('/', termsRoutes({ termsUrl: config.TERMS_URL }));
  const messenger =
    deps.messenger ?? createBotMessenger({ token: config.MESSENGER_BOT_TOKEN, apiUrl: config.MESSENGER_API_URL });
  const screen = sanctionsScreen(deps.sanctions, { required: config.OFAC_REQUIRED });
  app.route('/', deliveryRoutes({ db, catalog, clock, logger, messenger, termsUrl: config.TERMS_URL, limits, screen }));
  // main.ts builds the plane (shared with the reconciler and the shutdown) with the same limits.
  const plane = deps.plane ?? paymentPlaneFor({ ...deps, metrics, limitPayer: limits.payer });
  app.route('/', subscribeRoutes({ plane, isCity, resolutionOf: resolutionFor(catalog, deps.ruleFor) }));
  const receiptTtlMs = config.RECEIPT_TTL_DAYS * 86_400_000;
  app.route(
    '/',
    receiptRoutes({ ...deps, ...stores, baseUrl: config.BASE_URL, receiptTtlMs, limitWallet: limits.receiptRecovery }),
  );
  app.route(
    '/',
    paidSignalsRoutes({
      ...deps,
      ...stores,
      plane,
      isCity,
      maxWaiters: config.MAX_SIGNAL_WAITERS,
      receiptTtlMs,
      baseUrl: config.BASE_URL,
      signIn: createSiwxSignIn({
        ...deps,
        baseUrl: config.BASE_URL,
        limitWallet: limits.signIn,
        verifyMessage: deps.chainVerifier?.verifyMessage?.bind(deps.chainVerifier),
        crossNode: deps.cluster?.crossNode,
      }),
    }),
  );
  app.route('/', metricsRoutes({ metrics, adminToken: config.ADMIN_TOKEN }));
  app.route(
    '/',
    adminRoutes({
      ...deps,
      adminToken: config.ADMIN_TOKEN,
      paymentMode: config.PAYMENT_MODE,
      feed: config.FEED,
      facilitators: facilitatorHealthOf(deps.settler),
    }),
  );
  app.route(
    '/',
    discoveryRoutes({
      docs: ROUTE_DOCS,
      baseUrl: config.BASE_URL,
      termsUrl: config.TERMS_URL,
      apiVersion: API_VERSION,
      disclaimer,
      paymentMode: config.PAYMENT_MODE,
      v2Nonce: config.V2_NONCE,
      payTo: payTo(config),
      usdc: config.USDC_ADDRESS,
      cities: catalog.active,
    }),
  );

  const routes = routeTable(ROUTE_DOCS);
  app.notFound((c) => {
    const allowed = routes.allowed(c.req.path);
    if (allowed.length > 0) {
      const allow = allowed.join(', ');
      const error = `method ${c.req.method} not allowed; use ${allow}`;
      return replyJson(c as Ctx, { error }, { status: 405, headers: { allow } });
    }
    return replyJson(c as Ctx, { error: 'not found' }, { status: 404 });
  });

  app.onError((err, c) => {
    if (err instanceof ApiError)
      return replyJson(c as Ctx, { error: err.message, ...err.extra }, { status: err.status, headers: err.headers });
    // A body the client broke off or framed badly is the client's problem, not an outage.
    if (isClientAbort(err)) {
      logger.debug('request body unreadable', {
        method: c.req.method,
        path: c.req.path,
        reason: err instanceof Error ? err.message : String(err),
      });
      return replyJson(c as Ctx, { error: 'request body could not be read' }, { status: 400 });
    }
    if (err instanceof HTTPException) {
      if (err.status >= 500) logger.error('request failed', { path: c.req.path, err });
      return replyJson(c as Ctx, { error: err.message || 'request rejected' }, { status: err.status });
    }
    logger.error('unhandled error', { method: c.req.method, path: c.req.path, err });
    return replyJson(c as Ctx, { error: 'internal error' }, { status: 500 });
  });

  const edge = createEdge(routes, (req, path, peer) => {
    const route = limitedRoute(req.method, path, () => signedRead(req.headers));
    return route === null ? null : limits.checkRequest(route, peer, () => req.headers.get('x-forwarded-for'));
  });
  // The disclaimer, the edge and the latency metric run around app.fetch (lib/fast-path.ts says why).
  // Every decision keys on the path the router matches: Hono's getPath decodes percent-escapes
  // (decodeURI: unreserved letters yes, `%2F` no), after @hono/node-server has resolved `.`/`..`
  // segments. Keying on the raw path let `/v1/%73ubscribe` skip the address limit.
  app.fetch = wrapFetch(app.fetch, {
    bindings: { disclaimer },
    pathOf: (req, env) => app.getPath(req, { env: env as AppEnv['Bindings'] }),
    routeOf: routes.label,
    before: (req, path, env) => edge.before(req, path, env as NodeBindings | undefined),
    finish: (res, path, env) => edge.finish(res, path, (env as NodeBindings | undefined)?.outgoing),
    series: (method, route, status) => latency.series({ method, route, status: String(status) }),
  });
  return Object.assign(app, { limits });
}
