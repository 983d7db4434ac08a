#!/usr/bin/env node
import { join } from 'node:path';
import { createApp } from './app.ts';
import { ConfigError, loadConfig, loadDataDir, type Config } from './config.ts';
import { withoutUnreadableSecretFiles } from './lib/secrets.ts';
import { openDb, openReadOnly, type Db } from './db/open.ts';
import { loadOrCreateSecret } from './db/secret.ts';
import { citySelection, createCatalog } from './cities/catalog.ts';
import { CITY_ROWS } from './cities/catalog-data.ts';
import { systemClock } from './lib/clock.ts';
import { createLogger, defaultLogFormat } from './lib/logger.ts';
import { createMetrics } from './lib/metrics.ts';
import { loadSanctionsList } from './sanctions/list.ts';
import { paymentPlaneFor } from './payments/from-config.ts';
import { reconcilePayments, startReconciler } from './payments/reconcile.ts';
import { createShutdown, installShutdownSignals } from './ops/shutdown.ts';
import { paymentBackends } from './payments/backends.ts';
import { describeKind } from './payments/settlers/negotiate.ts';
import { VERSION } from './version.ts';
import { CLI_HELP, COMMAND_USAGE, isCliCommand } from './buyer/cli/help.ts';
import { nativeSqliteAddonFile, nativeSqliteBinding } from './db/native-binding.ts';
import { startCheckpointer } from './db/checkpointer.ts';
import { createBotMessenger } from './delivery/messenger.ts';
import { createOutbox } from './delivery/outbox.ts';
import { sanctionsScreen } from './delivery/screen.ts';
import { createDeliveryWorker } from './delivery/worker.ts';
import { createPoller } from './poller/poller.ts';
import { createFeed } from './poller/feed.ts';
import { backupDatabase } from './ops/backup.ts';
import { createRetention } from './ops/retention.ts';
import { formatReport, runDoctor } from './ops/doctor.ts';
import { REPLAY_HELP } from './replay/help.ts';
import { accessSync, constants as fsConstants, existsSync, readFileSync } from 'node:fs';
import { parseEnvFile } from './lib/env-file.ts';
import { configHelp } from './config-help.ts';
import { secureDataDir, usePrivateUmask } from './ops/files.ts';
import { exposureWarning, sanctionsProblem, startLine } from './ops/safety.ts';
import { watchSanctionsList } from './sanctions/watch.ts';
import { abuseLimitsFromConfig } from './limits/from-config.ts';
import { disclaimerText } from './terms/terms.ts';
import { addressInUse, lockDataDir, probePort, StartRefused } from './ops/exclusive.ts';
import { startHttpServer } from './ops/http-server.ts';
import { signalNotifierFor } from './signals/notifier.ts';
import { createConnectionCap } from './limits/connections.ts';
import { parseTrustedProxies } from './limits/client-address.ts';
import { litestreamBinary, replicaName, replicationSettings } from './replication/from-config.ts';
import { startReplication } from './replication/supervisor.ts';
import { RESTORE_USAGE, restoreArgs, restoreDatabase } from './replication/restore.ts';

/**
 * The only place that reads the environment, opens the database, listens and starts timers.
 * Exit codes: 0 done, 1 runtime failure, 2 bad configuration or usage.
 */
const HELP = `isocast ${VERSION}: daily-high temperature market signals, sold over x402

Usage: isocast <command> [flags]

Commands:
  serve       run the API, the poller and the delivery worker (default)
  migrate     bring the database in DATA_DIR to the current schema and exit
  backup <file>  write a consistent copy of the live database to <file> (safe while serving)
  restore [--timestamp T]  restore the database from REPLICA_URL into an empty DATA_DIR
  doctor      check configuration, database, sanctions list and upstreams; exit 1 on failure
  replay      replay a past city-day: the signals that would have fired and the final bucket (below)
  buy, read, receipt, register-chat   the buyer's client (below)
  help [config]  show this help, or every configuration variable with its default
  version     print the version (also -v, --version; -h, --help)

--env-file <path> (any command) reads variables from a file with systemd's EnvironmentFile rules.
Every configuration variable is also a serve flag: PAY_TO=0x.. or --pay-to 0x.., except secrets
(environment or <NAME>_FILE only). \`isocast help config\` lists them all.
Signals: SIGTERM/SIGINT stop gracefully; SIGHUP reloads the sanctions list (OFAC_LIST_PATH).

${REPLAY_HELP}
${CLI_HELP}`;

/** How long after start the checkpoint thread starts (db/checkpointer.ts). */
const CHECKPOINTER_START_DELAY_MS = 1_000;
/** How long after start the poller's first tick waits, so the listener answers first. */
const FIRST_TICK_DELAY_MS = 250;
/**
 * How long after start the maintenance no request waits for begins: the delivery worker (it
 * fails deliveries a stop interrupted), the retention prune and the sanctions file watch. Their
 * first passes and log lines were about 3 ms before the first answer (docs/performance.md).
 */
const BACKGROUND_START_DELAY_MS = 250;

export function dbPath(config: Pick<Config, 'DATA_DIR'>): string {
  return join(config.DATA_DIR, 'isocast.db');
}

function refuse(problems: string[]): never {
  for (const p of problems) process.stderr.write(`config: ${p}\n`);
  process.exit(2);
}

function canRead(path: string): boolean {
  try {
    accessSync(path, fsConstants.R_OK);
    return true;
  } catch {
    return false;
  }
}

/** A start refused for a reason the operator fixes (port taken, DATA_DIR in use): one line, exit 2. */
function refuseStart(message: string): never {
  process.stderr.write(`isocast: ${message}\n`);
  process.exit(2);
}

/** Held for the life of `serve`: the DATA_DIR lock (ops/exclusive.ts); the OS drops it at exit. */
let dataDirLock: { release(): void } | null = null;

function configOrExit(argv: string[], env: NodeJS.ProcessEnv = process.env): Config {
  try {
    return loadConfig(env, argv);
  } catch (err) {
    if (err instanceof ConfigError) refuse(err.problems);
    throw err;
  }
}

/**
 * `serve`'s configuration with the sanctions file checked in the same run: an operator sees every
 * problem of an env file at once, not one per restart.
 */
function serveConfigOrExit(argv: string[]): { config: Config; sanctions: ReturnType<typeof loadSanctionsList> } {
  let config: Config;
  try {
    config = loadConfig(process.env, argv);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    const p = err.partial;
    const listProblem =
      p.OFAC_LIST_PATH && !err.problems.some((x) => x.startsWith('OFAC_'))
        ? sanctionsProblem(
            { PAYMENT_MODE: p.PAYMENT_MODE ?? 'mock', OFAC_REQUIRED: p.OFAC_REQUIRED ?? p.PAYMENT_MODE === 'live' },
            loadSanctionsList({ path: p.OFAC_LIST_PATH, extra: p.OFAC_EXTRA }).loadError,
          )
        : null;
    refuse(listProblem ? [...err.problems, listProblem] : err.problems);
  }
  const sanctions = loadSanctionsList({ path: config.OFAC_LIST_PATH, extra: config.OFAC_EXTRA });
  const unscreened = sanctionsProblem(config, sanctions.loadError);
  if (unscreened) refuse([unscreened]);
  return { config, sanctions };
}

function dataDirOrExit(argv: string[]): { DATA_DIR: string } {
  try {
    return loadDataDir(process.env, argv);
  } catch (err) {
    if (err instanceof ConfigError) refuse(err.problems);
    throw err;
  }
}

function open(config: Pick<Config, 'DATA_DIR'>): Db {
  secureDataDir(config.DATA_DIR);
  return openDb(dbPath(config), { nativeBinding: nativeSqliteBinding() });
}

async function serve(argv: string[]): Promise<void> {
  const { config, sanctions } = serveConfigOrExit(argv);
  const logger = createLogger({
    level: config.LOG_LEVEL,
    base: { service: 'isocast' },
    format: config.LOG_FORMAT ?? defaultLogFormat(),
  });
  if (sanctions.loadError)
    logger.warn('sanctions list not loaded', { reason: sanctions.loadError, required: config.OFAC_REQUIRED });
  const exposed = exposureWarning(config);
  if (exposed) {
    process.stderr.write(`\n${exposed}\n\n`);
    logger.warn('mock mode reachable from other machines', { host: config.HOST });
  }
  // REPLICA_URL asks for durability: no litestream, no start (exit 2, like any bad setting).
  const replicaSettings = replicationSettings(config);
  const litestream = replicaSettings ? litestreamBinary(config) : null;
  if (litestream && 'problem' in litestream) refuse([litestream.problem]);
  // Before anything is created: a taken port creates nothing, a DATA_DIR in use is not touched.
  try {
    await probePort(config.HOST, config.PORT);
    dataDirLock = lockDataDir(config.DATA_DIR, nativeSqliteBinding());
  } catch (err) {
    if (err instanceof StartRefused) refuseStart(err.message);
    throw err;
  }
  const db = open(config);
  const secret = loadOrCreateSecret(config.DATA_DIR, config.SERVER_SECRET);
  const catalog = createCatalog(CITY_ROWS, citySelection(config.CITIES), config.MARKET_KINDS);
  const metrics = createMetrics();
  // Started once the database is open, stopped after it is closed (src/replication/supervisor.ts).
  const replication =
    replicaSettings && litestream && 'path' in litestream
      ? startReplication({
          bin: litestream.path,
          dataDir: config.DATA_DIR,
          dbPath: dbPath(config),
          settings: replicaSettings,
          db,
          logger,
          metrics,
        })
      : null;
  const { settler, chainVerifier, supported } = await paymentBackends(config).catch((err) =>
    err instanceof ConfigError ? refuse(err.problems) : Promise.reject(err),
  );
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
  const plane = paymentPlaneFor({
    config,
    db,
    secret,
    settler,
    sanctions,
    clock: systemClock,
    logger,
    chainVerifier,
    metrics,
    limitPayer: limits.payer,
  });
  // Payments a crash left between settle and apply are finished before anyone can pay again.
  await reconcilePayments({ plane, logger });
  // One messenger for the registration route and the worker, so both share one pacing state.
  const messenger = createBotMessenger({ token: config.MESSENGER_BOT_TOKEN, apiUrl: config.MESSENGER_API_URL });
  // Deliveries are screened against the same list object the payments use, reloaded in place.
  const screen = sanctionsScreen(sanctions, config.OFAC_REQUIRED);
  const outbox = createOutbox(db, systemClock, screen);
  const delivery = createDeliveryWorker({
    outbox,
    messenger,
    clock: systemClock,
    logger,
    termsUrl: config.TERMS_URL,
    metrics,
  });
  const feed = await createFeed(config, { db, clock: systemClock, logger });
  const poller = createPoller({
    db,
    catalog,
    clock: systemClock,
    logger: logger.child({ component: 'poller' }),
    intervalMs: config.POLL_INTERVAL_MS,
    metrics,
    onSignalInTransaction: outbox.enqueue,
    onSignalCommitted: () => delivery.wake(),
    ...feed,
  });
  const app = createApp({
    messenger,
    config,
    db,
    catalog,
    clock: systemClock,
    dayClock: feed.dayClock,
    logger,
    sanctions,
    metrics,
    secret,
    settler,
    chainVerifier,
    plane,
    limits,
    pollerHealth: poller.health,
    marketUrlFor: poller.marketUrlFor,
    ruleFor: poller.ruleFor,
    replication: replication ? () => ({ ...replication.status(), replica: replicaName(config) }) : undefined,
  });
  const ofacWatch = watchSanctionsList(sanctions, { logger, clock: systemClock, metrics });
  process.on('SIGHUP', () => ofacWatch.reload('SIGHUP'));

  const cap = createConnectionCap({
    max: config.MAX_CONNECTIONS_PER_ADDRESS,
    trustedProxies: parseTrustedProxies(config.TRUSTED_PROXIES),
  });
  const disclaimer = disclaimerText(config.TERMS_URL);
  const server = startHttpServer(
    { fetch: app.fetch, hostname: config.HOST, port: config.PORT, cap, metrics, disclaimer },
    (info) => {
      logger.info('listening', {
        host: config.HOST,
        port: info.port,
        mode: config.PAYMENT_MODE,
        feed: config.FEED,
        cities: catalog.active.length,
      });
      process.stderr.write(`${startLine(config, info.port)}\n`);
    },
  );
  // Taken between the probe and now (a race): the same line, not Node's unhandled-error trace.
  server.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EADDRINUSE') refuseStart(addressInUse(config.HOST, config.PORT));
    refuseStart(`cannot listen on ${config.HOST}:${config.PORT}: ${err.message}`);
  });
  // The first tick is tens of milliseconds of synchronous work; health checks and clients
  // waiting on a restart are answered first (docs/performance.md, start-up).
  poller.start(FIRST_TICK_DELAY_MS);
  // Prunes and PRAGMA optimize now (in batches that yield to requests) and then daily.
  const retention = createRetention({
    db,
    clock: systemClock,
    logger: logger.child({ component: 'retention' }),
    metrics,
    settings: {
      outboxDays: config.RETAIN_OUTBOX_DAYS,
      failedPaymentDays: config.RETAIN_FAILED_PAYMENTS_DAYS,
      receiptDays: config.RETAIN_RECEIPTS_DAYS,
    },
  });
  const background = setTimeout(() => {
    delivery.start();
    retention.start();
    ofacWatch.start();
  }, BACKGROUND_START_DELAY_MS);
  // Cancelled first at a stop; started during the stop's drain they are still stopped below.
  const backgroundStart = { stop: () => clearTimeout(background) };
  const reconciler = startReconciler({ plane, logger, intervalMs: config.RECONCILE_INTERVAL_MS });
  // WAL checkpoints (and their fsyncs) on a background thread, not inside a purchase's commit.
  // With a replica Litestream is the only checkpointer instead (docs/operations.md, Durability).
  const checkpointer = replication
    ? { stop: () => replication.detach() }
    : startCheckpointer({
        db,
        path: dbPath(config),
        addonFile: nativeSqliteAddonFile(),
        logger,
        metrics,
        startDelayMs: CHECKPOINTER_START_DELAY_MS,
      });
  installShutdownSignals(
    createShutdown({
      logger,
      server,
      plane,
      workers: [backgroundStart, reconciler, retention, poller, delivery, ofacWatch, checkpointer],
      closeDb: () => db.close(),
      releaseWaiters: () => signalNotifierFor(db).releaseAll(),
      afterDb: replication ? [replication] : [],
      maxSettleMs: settler.maxSettleMs,
    }),
  );
}

/**
 * `--env-file <path>` anywhere on the line: the file's variables, read with systemd's
 * EnvironmentFile= rules (src/lib/env-file.ts), override the environment as they do in the unit.
 * It lets hand-run commands and cron lines use /etc/isocast/env without a shell `source`.
 */
function applyEnvFile(argv: string[]): string[] {
  const at = argv.findIndex((a) => a === '--env-file' || a.startsWith('--env-file='));
  if (at < 0) return argv;
  const inline = argv[at]!.startsWith('--env-file=');
  const path = inline ? argv[at]!.slice('--env-file='.length) : argv[at + 1];
  if (!path || path.startsWith('--')) {
    process.stderr.write('isocast: --env-file needs a path\n');
    process.exit(2);
  }
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    process.stderr.write(`isocast: --env-file: cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? err}\n`);
    process.exit(2);
  }
  Object.assign(process.env, parseEnvFile(text));
  return [...argv.slice(0, at), ...argv.slice(at + (inline ? 1 : 2))];
}

async function main(rawArgv: string[]): Promise<void> {
  const argv = applyEnvFile(rawArgv);
  const [first, ...rest] = argv;
  const command = !first || first.startsWith('-') ? 'serve' : first;
  const args = command === first ? rest : argv;
  if (command === 'help' && args[0] === 'config') {
    process.stdout.write(configHelp());
    return;
  }
  // `isocast buy --help`: that command's own usage; `isocast help` and `serve --help`: all of it.
  if ((args.includes('--help') || args.includes('-h')) && isCliCommand(command)) {
    process.stdout.write(`${COMMAND_USAGE[command]}\n`);
    return;
  }
  if ((args.includes('--help') || args.includes('-h')) && command === 'replay') {
    process.stdout.write(REPLAY_HELP);
    return;
  }
  if (args.includes('--help') || args.includes('-h') || command === 'help') {
    process.stdout.write(HELP);
    return;
  }
  if (args.includes('--version') || args.includes('-v') || command === 'version') {
    process.stdout.write(`isocast ${VERSION}\n`);
    return;
  }
  // Every file the process creates (database, WAL, secret, backups) is private to its user.
  if (['serve', 'migrate', 'backup', 'doctor', 'restore'].includes(command)) usePrivateUmask();
  switch (command) {
    case 'serve':
      return serve(args);
    case 'migrate': {
      const config = dataDirOrExit(args);
      const db = open(config);
      process.stdout.write(`schema at version ${db.pragma('user_version', { simple: true })} in ${dbPath(config)}\n`);
      db.close();
      return;
    }
    case 'backup': {
      const [dest, ...flags] = args;
      if (!dest || dest.startsWith('--')) {
        process.stderr.write('usage: isocast backup <file> [flags]\n');
        process.exit(2);
      }
      const config = dataDirOrExit(flags);
      // No migration here: the upgrade path backs up with the new binary before it first starts, and
      // the copy must hold the old schema so the old binary can be restored with it.
      if (!existsSync(dbPath(config))) {
        process.stderr.write(`isocast backup: no database at ${dbPath(config)}\n`);
        process.exit(1);
      }
      secureDataDir(config.DATA_DIR);
      const db = openDb(dbPath(config), { nativeBinding: nativeSqliteBinding(), migrate: false });
      try {
        const r = await backupDatabase(db, dest, { nativeBinding: nativeSqliteBinding() });
        process.stdout.write(`backup written to ${dest}: ${r.pages} pages, integrity ${r.integrity}\n`);
      } finally {
        db.close();
      }
      return;
    }
    case 'restore': {
      const parsed = restoreArgs(args);
      if (parsed.problem) {
        process.stderr.write(`${parsed.problem}\n${RESTORE_USAGE}\n`);
        process.exit(2);
      }
      const config = configOrExit(parsed.rest);
      process.exitCode = await restoreDatabase(config, dbPath(config), parsed.timestamp, {
        stdout: (l) => process.stdout.write(`${l}\n`),
        stderr: (l) => process.stderr.write(`${l}\n`),
        nativeBinding: nativeSqliteBinding(),
      });
      return;
    }
    case 'doctor': {
      const readable = withoutUnreadableSecretFiles(process.env, canRead);
      for (const note of readable.notes) process.stdout.write(`note: ${note}\n`);
      const config = configOrExit(args, readable.env);
      // Read-only: doctor must never migrate (the upgrade path backs up the old schema first).
      const readOnly = () => openReadOnly(dbPath(config), { nativeBinding: nativeSqliteBinding() });
      const checks = await runDoctor({ config, openDb: readOnly, dbPath: dbPath(config) });
      process.stdout.write(formatReport(checks));
      if (checks.some((c) => c.status === 'fail')) process.exit(1);
      return;
    }
    case 'replay': {
      // The buyer's client and replay are evaluated only when asked for (src/cli-commands.ts).
      const { replay } = await import('./cli-commands.ts');
      process.exitCode = await replay(args, process.env);
      return;
    }
    default:
      if (isCliCommand(command)) {
        const { buyerCommand } = await import('./cli-commands.ts');
        process.exitCode = await buyerCommand(command, args, process.env);
        return;
      }
      process.stderr.write(`unknown command: ${command}\n\n${HELP}`);
      process.exit(2);
  }
}

main(process.argv.slice(2)).catch((err) => {
  process.stderr.write(`isocast: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
