import { Worker } from 'node:worker_threads';
import { readAssetText, seaModule } from '../lib/assets.ts';
import type { Logger } from '../lib/logger.ts';
import type { Metrics } from '../lib/metrics.ts';
import type { CheckpointMessage, CheckpointWorkerData } from './checkpoint-worker.ts';
import type { Db } from './open.ts';

/** SQLite's own checkpoint runs inside a purchase's commit and fsyncs twice (up to 57 ms on a VPS disk). */
export const CHECKPOINT_WORKER_ASSET = 'checkpoint-worker.cjs';
const CHECKPOINT_INTERVAL_MS = 250;
/** The main connection's own checkpoint stays as a safety net: 16,384 pages of 4 KiB, 64 MiB of WAL. */
const FALLBACK_PAGES = 16_384;
const WAL_SIZE_LIMIT_BYTES = 16 * 1024 * 1024;
const SQLITE_DEFAULT_PAGES = 1000;

export function startCheckpointer(deps: {
  db: Db;
  path: string;
  addonFile?: string;
  logger: Logger;
  metrics?: Metrics;
  startDelayMs?: number;
}) {
  const { db, logger } = deps;
  const checkpoints = deps.metrics?.counter(
    'isocast_sqlite_checkpoints_total',
    'WAL checkpoints that copied frames, run by the background checkpoint thread',
  );
  const walFrames = deps.metrics?.gauge('isocast_sqlite_wal_frames', 'Frames in the WAL at the last checkpoint');
  const workerData: CheckpointWorkerData = {
    path: deps.path,
    addonFile: deps.addonFile,
    intervalMs: CHECKPOINT_INTERVAL_MS,
  };
  let ready = false;
  let stopping = false;
  let fellBack = false;
  // A failing thread reports 'error' and then 'exit': one fallback, one warning.
  const fallBack = (why: string) => {
    if (stopping || fellBack) return;
    fellBack = true;
    ready = false;
    db.pragma(`wal_autocheckpoint = ${SQLITE_DEFAULT_PAGES}`);
    logger.warn('checkpoint thread stopped; the main connection checkpoints again', { reason: why });
  };

  let worker: Worker | null = null;
  const start = () => {
    try {
      worker = seaModule()
        ? new Worker(readAssetText(CHECKPOINT_WORKER_ASSET), { eval: true, workerData })
        : new Worker(new URL('./checkpoint-worker.ts', import.meta.url), { workerData });
    } catch (err) {
      logger.warn('checkpoint thread could not start; the main connection checkpoints', { err });
      return;
    }
    worker.on('message', (m: CheckpointMessage) => {
      if (m.type === 'ready') {
        if (stopping) return;
        ready = true;
        db.pragma(`wal_autocheckpoint = ${FALLBACK_PAGES}`);
        db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
        logger.debug('WAL checkpoints run on a background thread', { intervalMs: workerData.intervalMs });
      } else if (m.type === 'checkpoint') {
        checkpoints?.inc();
        walFrames?.set(m.walFrames);
      } else logger.warn('checkpoint thread error', { reason: m.message });
    });
    worker.on('error', (err) => fallBack(err.message));
    worker.on('exit', (code) => {
      worker = null;
      fallBack(`exit code ${code}`);
    });
    worker.unref();
  };
  // Started after the listener answers: a thread's start is CPU the first requests should get.
  const timer = setTimeout(start, deps.startDelayMs ?? 0);
  timer.unref();

  return {
    running: () => ready,
    async stop() {
      stopping = true;
      clearTimeout(timer);
      if (ready) db.pragma(`wal_autocheckpoint = ${SQLITE_DEFAULT_PAGES}`);
      ready = false;
      const w = worker;
      if (!w) return;
      const exited = new Promise<void>((resolve) => w.once('exit', () => resolve()));
      // Held open until the thread has closed its connection, so the database closes after it.
      w.ref();
      w.postMessage('stop');
      const late = setTimeout(() => void w.terminate(), 2000);
      await exited;
      clearTimeout(late);
    },
  };
}
