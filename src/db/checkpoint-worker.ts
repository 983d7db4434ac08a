import Database from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';

/** PASSIVE checkpoints on their own connection never block the main one; the binary bundles this file alone. */
export type CheckpointWorkerData = { path: string; addonFile?: string; intervalMs: number };

export type CheckpointMessage =
  | { type: 'ready' }
  | { type: 'checkpoint'; walFrames: number }
  | { type: 'error'; message: string };

const data = workerData as CheckpointWorkerData;
const port = parentPort!;
const post = (m: CheckpointMessage) => port.postMessage(m);

let db: Database.Database;
try {
  // The main thread's own addon file: one SQLite library, so POSIX locks and the WAL index are shared.
  const addon = { exports: {} as object };
  if (data.addonFile) process.dlopen(addon, data.addonFile);
  const nativeBinding = data.addonFile ? { nativeBinding: addon.exports as unknown as string } : {};
  db = new Database(data.path, { fileMustExist: true, timeout: 1000, ...nativeBinding });
} catch (err) {
  post({ type: 'error', message: `cannot open the database: ${(err as Error).message}` });
  process.exit(1);
}
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');

// The WAL's state after the last pass: a pass that leaves it as it was copied nothing.
let last = { log: -1, checkpointed: -1 };
const timer = setInterval(() => {
  try {
    const r = checkpoint.get() as { busy: number; log: number; checkpointed: number };
    if (r.log === last.log && r.checkpointed === last.checkpointed) return;
    last = { log: r.log, checkpointed: r.checkpointed };
    if (r.log > 0) post({ type: 'checkpoint', walFrames: r.log });
  } catch (err) {
    post({ type: 'error', message: (err as Error).message });
  }
}, data.intervalMs);

port.on('message', (m: unknown) => {
  if (m !== 'stop') return;
  clearInterval(timer);
  db.close();
  port.close();
});
post({ type: 'ready' });
