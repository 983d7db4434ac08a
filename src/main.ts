#!/usr/bin/env node
import { serve as listen } from '@hono/node-server';
import { join } from 'node:path';
import { createApp } from './app.ts';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { openDb, type Db } from './db/open.ts';
import { loadOrCreateSecret } from './db/secret.ts';
import { createCatalog } from './cities/catalog.ts';
import { systemClock } from './lib/clock.ts';
import { createLogger, type Logger } from './lib/logger.ts';
import { createMetrics } from './lib/metrics.ts';
import { loadSanctionsList } from './sanctions/list.ts';
import { paymentPlaneFor } from './payments/plane.ts';
import { reconcilePayments } from './payments/reconcile.ts';
import { chainVerifierFromConfig, settlerFromConfig } from './payments/settlers/from-config.ts';
import { VERSION } from './version.ts';
import { CLI_HELP, isCliCommand, runCli, type CliCommand } from './cli/index.ts';
import { nativeSqliteBinding } from './db/native-binding.ts';
import { createBotMessenger } from './delivery/messenger.ts';
import { createOutbox } from './delivery/outbox.ts';
import { createDeliveryWorker } from './delivery/worker.ts';
import { createPoller } from './poller/poller.ts';
import { createFeed } from './poller/feed.ts';
import { backupDatabase } from './ops/backup.ts';
import { createRetention } from './ops/retention.ts';
import { formatReport, runDoctor } from './ops/doctor.ts';
import { REPLAY_HELP, replayCommand } from './replay/command.ts';
import { ReplayInputError } from './replay/errors.ts';
import { existsSync, readFileSync } from 'node:fs';

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
  doctor      check configuration, database, sanctions list and upstreams; exit 1 on failure
  replay      replay a past city-day: the signals that would have fired and the final bucket (below)
  buy, read, register-chat   the buyer's client (below)
  help        show this help
  version     print the version

Every configuration variable is also a serve flag: PAY_TO=0x.. or --pay-to 0x..
See README.md (Configuration) for the full list.

${REPLAY_HELP}
${CLI_HELP}`;

/** Buyer commands: the only environment value they see is ISOCAST_KEY, read here and passed down. */
async function buyer(command: CliCommand, argv: string[]): Promise<number> {
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    return await runCli(command, argv, {
      stdout: (line) => process.stdout.write(`${line}\n`),
      stderr: (line) => process.stderr.write(`${line}\n`),
      envKey: process.env.ISOCAST_KEY || undefined,
      signal: stop.signal,
    });
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

export function dbPath(config: Config): string {
  return join(config.DATA_DIR, 'isocast.db');
}

function configOrExit(argv: string[]): Config {
  try {
    return loadConfig(process.env, argv);
  } catch (err) {
    if (err instanceof ConfigError) {
      for (const p of err.problems) process.stderr.write(`config: ${p}\n`);
      process.exit(2);
    }
    throw err;
  }
}

function open(config: Config): Db {
  return openDb(dbPath(config), { nativeBinding: nativeSqliteBinding() });
}

async function serve(argv: string[]): Promise<void> {
  const config = configOrExit(argv);
  const logger = createLogger({ level: config.LOG_LEVEL, base: { service: 'isocast' } });
  const db = open(config);
  const secret = loadOrCreateSecret(config.DATA_DIR, config.SERVER_SECRET);
  const sanctions = loadSanctionsList({ path: config.OFAC_LIST_PATH, extra: config.OFAC_EXTRA });
  if (sanctions.loadError) logger.warn('sanctions list not loaded', { reason: sanctions.loadError, required: config.OFAC_REQUIRED });
  const catalog = createCatalog();
  const metrics = createMetrics();
  const settler = settlerFromConfig(config);
  const chainVerifier = chainVerifierFromConfig(config);
  // Payments a crash left between settle and apply are finished before anyone can pay again.
  await reconcilePayments({ plane: paymentPlaneFor({ config, db, secret, settler, sanctions, clock: systemClock, logger, chainVerifier }), settler, clock: systemClock, logger });
  // One messenger for the registration route and the worker, so both share one pacing state.
  const messenger = createBotMessenger({ token: config.MESSENGER_BOT_TOKEN, apiUrl: config.MESSENGER_API_URL });
  const outbox = createOutbox(db, systemClock);
  const delivery = createDeliveryWorker({ outbox, messenger, clock: systemClock, logger, termsUrl: config.TERMS_URL, metrics });
  const poller = createPoller({
    db, catalog, clock: systemClock, logger: logger.child({ component: 'poller' }), intervalMs: config.POLL_INTERVAL_MS, metrics,
    onSignalInTransaction: outbox.enqueue, onSignalCommitted: () => delivery.wake(),
    ...createFeed(config, { db, clock: systemClock, logger }),
  });
  const app = createApp({ messenger, config, db, catalog, clock: systemClock, logger, sanctions, metrics, secret, settler, chainVerifier, pollerHealth: poller.health, marketUrlFor: poller.marketUrlFor });

  const server = listen({ fetch: app.fetch, hostname: config.HOST, port: config.PORT }, (info) => {
    logger.info('listening', { host: config.HOST, port: info.port, mode: config.PAYMENT_MODE, feed: config.FEED, cities: catalog.active.length });
  });
  poller.start();
  delivery.start();
  // Prunes and PRAGMA optimize now (in batches that yield to requests) and then daily.
  const retention = createRetention({ db, clock: systemClock, logger: logger.child({ component: 'retention' }), metrics, settings: {
    outboxDays: config.RETAIN_OUTBOX_DAYS, failedPaymentDays: config.RETAIN_FAILED_PAYMENTS_DAYS, receiptDays: config.RETAIN_RECEIPTS_DAYS,
  } });
  retention.start();
  installShutdown(logger, async () => {
    await retention.stop();
    await poller.stop();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await delivery.stop();
    db.close();
  });
}

function installShutdown(logger: Logger, stop: () => Promise<void>): void {
  let stopping = false;
  const onSignal = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info('shutting down', { signal });
    // In-flight requests finish; a stuck one cannot hold the process forever.
    const force = setTimeout(() => { logger.warn('forced exit after 10 s'); process.exit(1); }, 10_000);
    force.unref();
    stop().then(() => { logger.info('stopped'); process.exit(0); }, (err) => { logger.error('shutdown failed', { err }); process.exit(1); });
  };
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  process.on('SIGINT', () => onSignal('SIGINT'));
}

async function main(argv: string[]): Promise<void> {
  const [first, ...rest] = argv;
  const command = !first || first.startsWith('--') ? 'serve' : first;
  const args = command === first ? rest : argv;
  if (args.includes('--help') || args.includes('-h') || command === 'help') { process.stdout.write(HELP); return; }
  if (args.includes('--version') || args.includes('-v') || command === 'version') { process.stdout.write(`isocast ${VERSION}\n`); return; }
  switch (command) {
    case 'serve': return serve(args);
    case 'migrate': {
      const config = configOrExit(args);
      const db = open(config);
      process.stdout.write(`schema at version ${db.pragma('user_version', { simple: true })} in ${dbPath(config)}\n`);
      db.close();
      return;
    }
    case 'backup': {
      const [dest, ...flags] = args;
      if (!dest || dest.startsWith('--')) { process.stderr.write('usage: isocast backup <file> [flags]\n'); process.exit(2); }
      const config = configOrExit(flags);
      // No migration here: the upgrade path backs up with the new binary before it first starts, and
      // the copy must hold the old schema so the old binary can be restored with it.
      if (!existsSync(dbPath(config))) { process.stderr.write(`isocast backup: no database at ${dbPath(config)}\n`); process.exit(1); }
      const db = openDb(dbPath(config), { nativeBinding: nativeSqliteBinding(), migrate: false });
      try {
        const r = await backupDatabase(db, dest, { nativeBinding: nativeSqliteBinding() });
        process.stdout.write(`backup written to ${dest}: ${r.pages} pages, integrity ${r.integrity}\n`);
      } finally {
        db.close();
      }
      return;
    }
    case 'doctor': {
      const config = configOrExit(args);
      const checks = await runDoctor({ config, openDb: () => open(config), dbPath: dbPath(config) });
      process.stdout.write(formatReport(checks));
      if (checks.some((c) => c.status === 'fail')) process.exit(1);
      return;
    }
    case 'replay': {
      process.exitCode = await replayCommand(args, {
        stdout: (text) => process.stdout.write(text),
        stderr: (text) => process.stderr.write(text),
        readFile: (path) => readFileSync(path, 'utf8'),
        clock: systemClock,
        catalog: createCatalog(),
        upstreams: () => {
          let c: Config;
          try { c = loadConfig(process.env); } catch (err) {
            if (err instanceof ConfigError) throw new ReplayInputError(`configuration: ${err.problems.join('; ')}`);
            throw err;
          }
          return { weatherSource: c.WEATHER_SOURCE, weatherUrl: c.WEATHER_URL, wuApiKey: c.WU_API_KEY, metarUrl: c.METAR_URL, gammaUrl: c.GAMMA_URL };
        },
      });
      return;
    }
    default:
      if (isCliCommand(command)) { process.exitCode = await buyer(command, args); return; }
      process.stderr.write(`unknown command: ${command}\n\n${HELP}`);
      process.exit(2);
  }
}

main(process.argv.slice(2)).catch((err) => {
  process.stderr.write(`isocast: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
