import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as delay } from 'node:timers/promises';
import type { Db } from '../db/open.ts';
import { backoffMs } from '../lib/backoff.ts';
import type { Logger } from '../lib/logger.ts';
import type { Metrics } from '../lib/metrics.ts';
import { litestreamYaml, type ReplicationInput } from './settings.ts';
import { createReplicaTracker } from './tracker.ts';

/**
 * Node has no parent-death signal: an `sh` guard sends SIGTERM when our pipe closes, even at kill -9.
 * Its own process group keeps Ctrl-C off it; it stops after the database closed, so its final sync sees every commit.
 */
const GUARD =
  'exec 3<&0; "$0" "$@" </dev/null 3<&- & ls=$!; (read -r _ <&3; kill -TERM "$ls" 2>/dev/null) & w=$!; exec 3<&-; wait "$ls"; s=$?; kill "$w" 2>/dev/null; exit "$s"';
/** Restarts: 1 s doubling to 1 min; a run of a minute starts the count again. */
const RESTART_BASE_MS = 1_000;
const RESTART_MAX_MS = 60_000;
const HEALTHY_RUN_MS = 60_000;
/** Litestream's final sync at a stop: an upload in flight plus the last one. */
const STOP_TIMEOUT_MS = 15_000;
const POLL_MS = 100;

const LEVELS = ['debug', 'info', 'warn', 'error'] as const;

/** The child's environment: what Litestream needs, none of our secrets. */
const childEnv = (env: NodeJS.ProcessEnv): NodeJS.ProcessEnv =>
  Object.fromEntries(Object.entries(env).filter(([k, v]) => v !== undefined && CHILD_ENV.test(k)));
const CHILD_ENV = /^(PATH|HOME|TZ|SSL_CERT_FILE|SSL_CERT_DIR|AWS_.*)$/;

export function runLitestream(
  bin: string,
  args: string[],
  opts: { timeoutMs?: number; onLine?: (line: string) => void } = {},
): Promise<{ code: number; stdout: string[]; stderr: string[] }> {
  return new Promise((resolve) => {
    const out = { stdout: [] as string[], stderr: [] as string[] };
    const env = childEnv(process.env);
    const proc = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'], env, timeout: opts.timeoutMs });
    for (const s of ['stdout', 'stderr'] as const)
      createInterface({ input: proc[s] }).on('line', (line) => {
        out[s].push(line);
        opts.onLine?.(line);
      });
    proc.on('error', () => resolve({ code: 127, ...out }));
    proc.on('close', (code) => resolve({ code: code ?? 1, ...out }));
  });
}

export function writeLitestreamConfig(dataDir: string, dbPath: string, settings: ReplicationInput): string {
  const path = join(dataDir, 'litestream.yml');
  writeFileSync(path, litestreamYaml(dbPath, settings), { mode: 0o600 });
  // An older file keeps its mode through writeFileSync.
  chmodSync(path, 0o600);
  return path;
}

export function startReplication(deps: {
  bin: string;
  dataDir: string;
  dbPath: string;
  settings: ReplicationInput;
  db: Db;
  logger: Logger;
  metrics?: Metrics;
  now?: () => number;
}) {
  const now = deps.now ?? Date.now;
  const log = deps.logger.child({ component: 'litestream' });
  const tracker = createReplicaTracker();
  const configPath = writeLitestreamConfig(deps.dataDir, deps.dbPath, deps.settings);
  const lag = deps.metrics?.gauge('isocast_replication_lag_seconds', 'Age of the oldest commit not yet on the replica');
  const lastSync = deps.metrics?.gauge(
    'isocast_replication_last_sync_timestamp_seconds',
    'Unix time of the last upload Litestream finished',
  );
  const upGauge = deps.metrics?.gauge('isocast_replication_up', '1 while the litestream process runs');
  const failures = deps.metrics?.counter(
    'isocast_replication_failures_total',
    'Litestream errors and exits while replication should be running',
  );
  let child: ChildProcess | null = null;
  let stopping = false;
  let attempt = 0;
  let restartTimer: NodeJS.Timeout | null = null;
  let lastErrorLogAt = Number.NEGATIVE_INFINITY;
  let attached = true;

  const fail = (message: string) => {
    tracker.failed(now(), message);
    failures?.inc();
  };

  // Litestream is the only checkpointer while it runs; while it is down SQLite's default comes back
  // so the WAL cannot grow unbounded (Litestream's next start takes a new snapshot).
  const autocheckpoint = (pages: number) => {
    if (attached) deps.db.pragma(`wal_autocheckpoint = ${pages}`);
  };

  const fold = (line: string) => {
    let rec: Record<string, unknown>;
    try {
      rec = JSON.parse(line) as Record<string, unknown>;
    } catch {
      if (line.trim()) log.info('litestream output', { line });
      return;
    }
    const { time: _time, level, msg, ...fields } = rec;
    const text = String(msg ?? '');
    const t = now();
    if (text === 'write wal segment') tracker.uploadStarted(t);
    if (text === 'wal segment written') {
      tracker.uploadWritten(t);
      attempt = 0;
    }
    const lvl = LEVELS.find((l) => l.toUpperCase() === level) ?? 'info';
    if (lvl === 'error') {
      fail(`${text}${fields.error ? `: ${String(fields.error)}` : ''}`);
      // A failing replica fails every second; the first one now, the rest in the minute's warning.
      if (t - lastErrorLogAt < 60_000) return;
      lastErrorLogAt = t;
      log.warn(`litestream: ${text}`, fields);
      return;
    }
    // An upload a second under load: kept for debugging, not the journal.
    const quiet = text === 'write wal segment' || text === 'wal segment written';
    log[quiet ? 'debug' : lvl](`litestream: ${text}`, fields);
  };

  const start = () => {
    restartTimer = null;
    if (stopping) return;
    const startedAt = now();
    const proc = spawn('/bin/sh', ['-c', GUARD, deps.bin, 'replicate', '-config', configPath, '-no-expand-env'], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: childEnv(process.env),
      detached: true,
    });
    child = proc;
    autocheckpoint(0);
    tracker.setUp({ up: true });
    upGauge?.set(1);
    createInterface({ input: proc.stdout! }).on('line', fold);
    createInterface({ input: proc.stderr! }).on('line', fold);
    proc.on('error', (err) => log.error('litestream could not start', { err }));
    // The pipe is the guard's lifeline; an EPIPE at our exit is expected.
    proc.stdin!.on('error', () => {});
    proc.on('exit', (code, signal) => {
      child = null;
      tracker.setUp({ up: false });
      upGauge?.set(0);
      autocheckpoint(1000);
      if (stopping) return;
      fail(`litestream exited (${signal ?? code})`);
      if (now() - startedAt >= HEALTHY_RUN_MS) attempt = 0;
      attempt++;
      const delay = backoffMs(attempt, RESTART_BASE_MS, RESTART_MAX_MS);
      log.warn('litestream exited; restarting', { code, signal, restartInMs: delay, attempt });
      restartTimer = setTimeout(start, delay);
      restartTimer.unref();
    });
    // Never holds the process open by itself: the shutdown stops it.
    proc.unref();
    for (const s of [proc.stdin, proc.stdout, proc.stderr]) (s as unknown as { unref?: () => void })?.unref?.();
    log.info('litestream started', { pid: proc.pid, config: configPath });
  };

  // Our commits, for the lag: total_changes() moves with every row this connection writes.
  const changes = deps.db.prepare('SELECT total_changes() AS n').pluck();
  let lastChanges = changes.get() as number;
  const poll = setInterval(() => {
    const t = now();
    if (attached) {
      const n = changes.get() as number;
      if (n !== lastChanges) tracker.changed(t);
      lastChanges = n;
    }
    const s = tracker.status(t);
    lag?.set(s.lagMs / 1000);
    if (s.lastSyncAt !== null) lastSync?.set(Math.floor(s.lastSyncAt / 1000));
    const w = tracker.warning(t);
    if (w)
      log.warn('replica not syncing', {
        lagMs: w.lagMs,
        litestreamUp: w.up,
        lastSyncAt: w.lastSyncAt === null ? null : new Date(w.lastSyncAt).toISOString(),
        failuresSinceLastWarning: w.failuresSinceLastWarning,
        lastError: w.lastError,
      });
  }, POLL_MS);
  poll.unref();
  start();

  return {
    status: (t = now()) => tracker.status(t),
    detach() {
      attached = false;
    },
    /** Stops Litestream after its final sync (after the database closed). */
    async stop() {
      stopping = true;
      attached = false;
      clearInterval(poll);
      if (restartTimer) clearTimeout(restartTimer);
      const proc = child;
      if (!proc) return;
      // 'close': exited and its last log lines read, so they are folded before ours.
      const exited = new Promise<void>((resolve) => proc.once('close', () => resolve()));
      proc.ref();
      // Closing the guard's pipe is the stop: SIGTERM to Litestream, which syncs and exits.
      proc.stdin!.end();
      const cancel = new AbortController();
      const deadline = delay(STOP_TIMEOUT_MS, 'late' as const, { signal: cancel.signal }).catch(() => null);
      if ((await Promise.race([exited, deadline])) === 'late') {
        log.warn('litestream did not stop in time; killed', { timeoutMs: STOP_TIMEOUT_MS });
        try {
          process.kill(-proc.pid!, 'SIGKILL');
        } catch {
          /* already gone */
        }
        await exited;
      }
      cancel.abort();
      log.info('litestream stopped');
    },
  };
}
