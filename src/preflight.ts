import { fstatSync } from 'node:fs';
import { join } from 'node:path';
import { isatty } from 'node:tty';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { openDb, type Db } from './db/open.ts';
import { nativeSqliteBinding } from './db/native-binding.ts';
import { createLogger, defaultLogFormat } from './lib/logger.ts';
import { loadSanctionsList } from './sanctions/list.ts';
import { exposureWarning, sanctionsProblem } from './ops/safety.ts';
import { lockDataDir, secureDataDir, StartRefused } from './db/files.ts';
import { createMetrics } from './lib/metrics.ts';
import { openListener } from './ops/listener.ts';
import { litestreamBinary, replicationSettings } from './replication/binary.ts';

/**
 * What the commands share to refuse or open, and `serve`'s first start-up phase: every reason to
 * refuse a start, checked before anything is created (src/serve.ts runs the rest).
 */

export function dbPath(config: Pick<Config, 'DATA_DIR'>): string {
  return join(config.DATA_DIR, 'isocast.db');
}

/** What the operator fixes (settings; `isocast`: a port taken, DATA_DIR in use), a line each; exit 2. */
export function refuse(problems: string[], source = 'config'): never {
  for (const p of problems) process.stderr.write(`${source}: ${p}\n`);
  process.exit(2);
}

export function open(config: Pick<Config, 'DATA_DIR'>): Db {
  secureDataDir(config.DATA_DIR);
  return openDb(dbPath(config), { nativeBinding: nativeSqliteBinding() });
}

/** Held for the life of `serve`: the DATA_DIR lock (db/files.ts); the OS drops it at exit. */
const held: { dataDirLock?: { release(): void } } = {};

/**
 * `serve`'s configuration with the sanctions file checked in the same run: an operator sees every
 * problem of an env file at once, not one per restart.
 */
function serveConfigOrExit(argv: string[]) {
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

/** Phase 1: every reason to refuse the start, checked before anything is created (the listener is bound first). */
export async function preflight(argv: string[]) {
  const { config, sanctions } = serveConfigOrExit(argv);
  const logger = createLogger({
    level: config.LOG_LEVEL,
    base: { service: 'isocast' },
    // isatty, not process.stdout.isTTY: that getter builds the stdout stream (a net.Socket for a
    // pipe), which the first info line's flush, after the first answer, builds anyway. A terminal
    // is a character device: a pipe, file, socket or /dev/null answers without loading node:tty (lazy in the binary).
    format: config.LOG_FORMAT ?? defaultLogFormat(stdoutMayBeTerminal() && isatty(1)),
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
  const metrics = createMetrics();
  let listener: Awaited<ReturnType<typeof openListener>>;
  try {
    listener = await openListener(config, { metrics, logger });
    held.dataDirLock = lockDataDir(config.DATA_DIR, nativeSqliteBinding());
  } catch (err) {
    if (err instanceof StartRefused) refuse([err.message], 'isocast');
    throw err;
  }
  const replica =
    replicaSettings && litestream && 'path' in litestream ? { bin: litestream.path, settings: replicaSettings } : null;
  return { config, sanctions, logger, replica, metrics, listener };
}

export type Preflight = Awaited<ReturnType<typeof preflight>>;

/** Could stdout be a terminal? Not a pipe, file or socket, nor a memory device (/dev/null: major 1 on Linux). */
function stdoutMayBeTerminal(): boolean {
  try {
    const st = fstatSync(1);
    return st.isCharacterDevice() && (process.platform !== 'linux' || st.rdev >> 8 !== 1);
  } catch {
    return false;
  }
}
