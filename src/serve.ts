import { createApp } from './app.ts';
import { createStores } from './stores.ts';
import { ConfigError } from './config.ts';
import { loadOrCreateSecret } from './db/files.ts';
import { CITY_ROWS, citySelection, createCatalog } from './cities/catalog.ts';
import { systemClock } from './lib/clock.ts';
import { paymentPlaneFor } from './payments/plane.ts';
import { reconcilePayments, startReconciler } from './payments/reconcile.ts';
import { createShutdown, installShutdownSignals } from './ops/shutdown.ts';
import { paymentBackends } from './payments/backends.ts';
import { describeKind } from './payments/settlers/negotiate.ts';
import { nativeSqliteAddonFile } from './db/native-binding.ts';
import { startCheckpointer } from './db/checkpointer.ts';
import { prepareOnFirstUse } from './db/open.ts';
import { createBotMessenger } from './delivery/messenger.ts';
import { createOutbox } from './delivery/outbox.ts';
import { sanctionsScreen } from './delivery/screen.ts';
import { createDeliveryWorker } from './delivery/worker.ts';
import { createPoller } from './poller/poller.ts';
import { createFeed } from './poller/feed.ts';
import { createRetention } from './ops/retention.ts';
import { startLine, streamCounts } from './ops/safety.ts';
import { watchSanctionsList } from './sanctions/list.ts';
import { abuseLimitsFromConfig } from './limits/limits.ts';
import { disclaimerText } from './terms/terms.ts';
import { describeReplica as replicaName } from './replication/settings.ts';
import { startReplication } from './replication/supervisor.ts';
import { readerSettler, startCluster } from './cluster/start.ts';
import { dbPath, open, preflight, refuse, type Preflight } from './preflight.ts';
import { writeSync } from 'node:fs';
import type { AddressInfo } from 'node:net';

/** `isocast serve` in phases, each taking what the earlier built: the order things must exist in. */

/** How long after start the checkpoint thread starts (db/checkpointer.ts). */
const CHECKPOINTER_START_DELAY_MS = 1_000;
/** How long after start the poller's first tick waits, so the listener answers first. */
const FIRST_TICK_DELAY_MS = 250;
/** When the delivery worker, retention prune and sanctions watch start: ~3 ms kept off the first answer. */
const BACKGROUND_START_DELAY_MS = 250;
/** How long after listening the statements no request has used yet are prepared (db/open.ts). */
const STATEMENT_WARM_DELAY_MS = 100;

/**
 * One line to stderr with write(2), without building process.stderr (a net.Socket for a pipe)
 * before the first answer; a full non-blocking descriptor or a short write hands the rest to it.
 */
function stderrLine(text: string): void {
  const bytes = Buffer.from(text);
  let written = 0;
  try {
    written = writeSync(2, bytes);
  } catch {
    // EAGAIN on a non-blocking pipe: the stream below queues it.
  }
  if (written < bytes.length) process.stderr.write(bytes.subarray(written));
}

/** Phase 2: the database and its stores, the secret, the catalog, the metrics and the replica beside them. */
function openStorage({ config, logger, replica, metrics }: Preflight) {
  const db = open(config);
  // Statements are prepared at first use until the listener is up, the rest soon after (listen).
  const statements = prepareOnFirstUse(db);
  // One store per table for the whole process: the routes, poller, worker and plane share them.
  const stores = createStores(db);
  const secret = loadOrCreateSecret(config.DATA_DIR, config.SERVER_SECRET);
  const catalog = createCatalog(CITY_ROWS, citySelection(config.CITIES), config.MARKET_KINDS);
  // Started once the database is open, stopped after it is closed (src/replication/supervisor.ts).
  const replication = replica
    ? startReplication({ ...replica, dataDir: config.DATA_DIR, dbPath: dbPath(config), db, logger, metrics })
    : null;
  // With NATS_URL: a primary's publisher, or a reader's follower (src/cluster/, loaded only then).
  const cluster = startCluster(config, { db, notifier: stores.notifier, logger, now: () => systemClock.now() });
  return { db, statements, stores, secret, catalog, replication, cluster };
}

type Started = Preflight & ReturnType<typeof openStorage>;

/** Phase 3: settlement backends, abuse limits and the payment plane, with a crash's leftovers finished. */
async function startPayments(s: Started) {
  const { config, logger, metrics } = s;
  const backends = await paymentBackends(config, { logger, metrics }).catch((err) =>
    err instanceof ConfigError ? refuse(err.problems) : Promise.reject(err),
  );
  const { chainVerifier, supported } = backends;
  // A read node forwards every purchase to its primary; its plane cannot settle one.
  const settler = config.ROLE === 'reader' ? readerSettler(backends.settler) : backends.settler;
  if (supported)
    logger[supported.ok ? 'info' : 'warn']('facilitator /supported', {
      ...(supported.ok ? { sending: describeKind(supported.kind), listed: supported.listed } : {}),
      ...(supported.ok ? {} : { problem: supported.detail }),
    });
  // One plane for the routes, the reconciler and the shutdown: they share its in-flight work.
  // Monotonic, not the app clock: a limit is about real request rates, and wall time can jump.
  const limits = abuseLimitsFromConfig(config, {
    now: () => performance.now(),
    disclaimer: disclaimerText(config.TERMS_URL),
    metrics,
  });
  const plane = paymentPlaneFor({ ...s, settler, clock: systemClock, chainVerifier, limitPayer: limits.payer });
  // Payments a crash left between settle and apply are finished before anyone can pay again.
  if (config.ROLE === 'primary') await reconcilePayments({ plane, logger });
  return { settler, chainVerifier, limits, plane };
}

/** Phase 4: the delivery worker and the poller that feeds it, not started yet. */
async function createWorkers(s: Started) {
  const { config, db, stores, logger, sanctions } = s;
  // One messenger for the registration route and the worker, so both share one pacing state.
  const messenger = createBotMessenger({ token: config.MESSENGER_BOT_TOKEN, apiUrl: config.MESSENGER_API_URL });
  // Deliveries are screened against the same list object the payments use, reloaded in place.
  const screen = sanctionsScreen(sanctions, { required: config.OFAC_REQUIRED });
  const outbox = createOutbox(db, { clock: systemClock, screen, reader: stores.reader });
  const delivery = createDeliveryWorker({ ...s, outbox, messenger, clock: systemClock, termsUrl: config.TERMS_URL });
  const feed = await createFeed(config, { db, clock: systemClock, logger });
  const poller = createPoller({
    ...s,
    clock: systemClock,
    logger: logger.child({ component: 'poller' }),
    intervalMs: config.POLL_INTERVAL_MS,
    onSignalInTransaction: outbox.enqueue,
    onSignalCommitted: () => {
      delivery.wake();
      s.cluster?.wake();
    },
    ...feed,
  });
  return { messenger, delivery, dayClock: feed.dayClock, poller };
}

type Payments = Awaited<ReturnType<typeof startPayments>>;
type Workers = Awaited<ReturnType<typeof createWorkers>>;

/** Phase 5: the app and its listener; a port lost to a race since the probe refuses the start. */
function listen(s: Started, payments: Payments, workers: Workers) {
  const { config, logger, catalog, replication } = s;
  const app = createApp({
    ...s,
    ...payments,
    clock: systemClock,
    messenger: workers.messenger,
    dayClock: workers.dayClock,
    pollerHealth: workers.poller.health,
    marketUrlFor: workers.poller.marketUrlFor,
    ruleFor: workers.poller.ruleFor,
    replication: replication ? () => ({ ...replication.status(), replica: replicaName(config) }) : undefined,
  });

  const { server } = s.listener;
  s.listener.open(app.fetch);
  const port = (server.address() as AddressInfo).port;
  logger.info('listening', {
    host: config.HOST,
    port,
    mode: config.PAYMENT_MODE,
    feed: config.FEED,
    ...streamCounts(catalog.active),
  });
  stderrLine(`${startLine(config, port, streamCounts(catalog.active))}\n`);
  s.statements.end();
  // A statement whose SQL fails to prepare ends the process, as it did when all were prepared at start.
  setTimeout(() => {
    s.statements.warm().catch((err: Error) => {
      process.stderr.write(`isocast: ${err.message}\n`);
      process.exit(1);
    });
  }, STATEMENT_WARM_DELAY_MS).unref();
  return server;
}

/** Phase 6: the timers, each delayed so the listener answers first, in the order a stop stops them. */
function startTimers(s: Started, payments: Payments, workers: Workers) {
  const { config, logger, metrics } = s;
  const ofacWatch = watchSanctionsList(s.sanctions, { logger, clock: systemClock, metrics });
  process.on('SIGHUP', () => ofacWatch.reload('SIGHUP'));
  // A read node only follows the stream (the primary's deletes arrive through it); checkpoints as a primary's.
  if (config.ROLE === 'reader') return [ofacWatch, startCheckpoints(s)];
  // The first tick is tens of ms of synchronous work: clients waiting on a restart are answered first.
  workers.poller.start(FIRST_TICK_DELAY_MS);
  // Prunes and PRAGMA optimize now (in batches that yield to requests) and then daily.
  const retention = createRetention({
    ...s,
    clock: systemClock,
    logger: logger.child({ component: 'retention' }),
    settings: {
      outboxDays: config.RETAIN_OUTBOX_DAYS,
      failedPaymentDays: config.RETAIN_FAILED_PAYMENTS_DAYS,
      receiptDays: config.RETAIN_RECEIPTS_DAYS,
    },
  });
  const background = setTimeout(() => {
    workers.delivery.start();
    retention.start();
    ofacWatch.start();
  }, BACKGROUND_START_DELAY_MS);
  // Cancelled first at a stop; started during the stop's drain they are still stopped below.
  const backgroundStart = { stop: () => clearTimeout(background) };
  const reconciler = startReconciler({ plane: payments.plane, logger, intervalMs: config.RECONCILE_INTERVAL_MS });
  return [backgroundStart, reconciler, retention, workers.poller, workers.delivery, ofacWatch, startCheckpoints(s)];
}

/** WAL checkpoints (and their fsyncs) on a background thread, not inside a purchase's commit. */
function startCheckpoints(s: Started): { stop(): void | Promise<void> } {
  const { config, replication } = s;
  // With a replica Litestream is the only checkpointer instead (docs/operations.md, Durability).
  return replication
    ? { stop: () => replication.detach() }
    : startCheckpointer({
        ...s,
        path: dbPath(config),
        addonFile: nativeSqliteAddonFile(),
        startDelayMs: CHECKPOINTER_START_DELAY_MS,
      });
}

export async function serve(argv: string[]): Promise<void> {
  const checked = await preflight(argv);
  const s: Started = { ...checked, ...openStorage(checked) };
  const payments = await startPayments(s);
  const workers = await createWorkers(s);
  const server = listen(s, payments, workers);
  const stoppable = startTimers(s, payments, workers);
  installShutdownSignals(
    createShutdown({
      logger: s.logger,
      server,
      plane: payments.plane,
      // The publisher reads the database: it stops with the workers, before the close.
      workers: s.cluster ? [...stoppable, s.cluster] : stoppable,
      closeDb: () => s.db.close(),
      releaseWaiters: () => s.stores.notifier.releaseAll(),
      afterDb: s.replication ? [s.replication] : [],
      maxSettleMs: payments.settler.maxSettleMs,
    }),
  );
}
