/**
 * Small pieces shared by the benchmark driver and its child processes: free ports, spawning a
 * server and waiting for its first 200, /proc readings, and summary statistics.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, readdirSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';

export const ROOT = join(import.meta.dirname, '..', '..');
export const NODE = process.execPath;

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/** Status of one GET with a fresh connection, or 0 when nothing answered. */
export function statusOf(url: string): Promise<number> {
  return new Promise((resolve) => {
    const req = request(url, { agent: false, timeout: 1_000 }, (res) => {
      res.resume();
      res.once('end', () => resolve(res.statusCode ?? 0));
    });
    req.once('error', () => resolve(0));
    req.once('timeout', () => {
      req.destroy();
      resolve(0);
    });
    req.end();
  });
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The environment of a benchmarked `serve` in mock mode with the sim feed: loopback only, one
 * poller tick at start and then quiet (the feed must not change the bytes under test), logs at the
 * production default. `extra` adds or overrides keys.
 */
export function mockServeEnv(
  port: number,
  dataDir: string,
  home: string,
  extra: NodeJS.ProcessEnv = {},
): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    PORT: String(port),
    BASE_URL: `http://127.0.0.1:${port}`,
    PAYMENT_MODE: 'mock',
    FEED: 'sim',
    POLL_INTERVAL_MS: '3600000',
    LOG_LEVEL: 'info',
    ...extra,
  };
}

export type Spawned = { child: ChildProcess; url: string; startMs: number; stop(): Promise<number | null> };

/**
 * Spawns a server listening on `port` and polls `readyPath` every 2 ms until it answers 200.
 * `startMs` is spawn() to that first 200. Output goes to `logFile` (kept for a failed run).
 */
export async function spawnServer(
  cmd: string,
  args: string[],
  opts: { env: NodeJS.ProcessEnv; port: number; cwd?: string; logFile: string; readyPath?: string },
): Promise<Spawned> {
  const url = `http://127.0.0.1:${opts.port}`;
  const log = createWriteStream(opts.logFile);
  const t0 = process.hrtime.bigint();
  const child = spawn(cmd, args, { cwd: opts.cwd ?? ROOT, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.pipe(log);
  child.stderr!.pipe(log);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(`${cmd} exited with ${child.exitCode} before answering; see ${opts.logFile}`);
    if ((await statusOf(url + (opts.readyPath ?? '/health'))) === 200) break;
    if (Number(process.hrtime.bigint() - t0) / 1e6 > 30_000) {
      child.kill('SIGKILL');
      throw new Error(`${cmd}: no 200 within 30 s`);
    }
    await sleep(2);
  }
  const startMs = Number(process.hrtime.bigint() - t0) / 1e6;
  return {
    child,
    url,
    startMs,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 12_000);
      const code = await exited;
      clearTimeout(t);
      return code;
    },
  };
}

/** Runs a node script as a child and parses the one JSON document it prints on stdout. */
export function runJson<T>(script: string, input: unknown, opts: { env?: NodeJS.ProcessEnv } = {}): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(NODE, [script, JSON.stringify(input)], {
      cwd: ROOT,
      env: opts.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
    });
    child.stderr.on('data', (c: Buffer) => {
      err += c.toString();
    });
    child.once('exit', (code) => {
      if (code !== 0) return reject(new Error(`${script} exited with ${code}: ${err.slice(-2000)}`));
      try {
        resolve(JSON.parse(out) as T);
      } catch {
        reject(new Error(`${script} printed no JSON: ${out.slice(-500)} ${err.slice(-500)}`));
      }
    });
  });
}

export function rssMiB(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/**
 * CPU seconds (user + system, every thread) a process has used so far, from /proc/<pid>/stat.
 * Clock ticks are 1/100 s on Linux, fine against rounds of whole seconds.
 */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime: fields 14 and 15 of stat(5)
}

/**
 * CPU nanoseconds a process has run so far, from the scheduler's own accounting
 * (/proc/<pid>/task/<tid>/schedstat, first field): every thread, or the main thread (the event
 * loop) alone. Nanosecond resolution, where `cpuSeconds` moves in 10 ms ticks: a subscribe round
 * of a few hundred requests is only a few of those.
 */
export function cpuNs(pid: number, which: 'all' | 'main' = 'all'): number {
  const tids = which === 'main' ? [String(pid)] : readdirSync(`/proc/${pid}/task`);
  let ns = 0;
  for (const tid of tids) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // A thread that ended between the listing and the read: its time is gone from /proc too.
    }
  }
  return ns;
}

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length === 0 ? NaN : s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

export function percentile(xs: readonly number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}

/** Spread of a series as (max - min) / median, the noise figure reported beside each ratio. */
export function spread(xs: readonly number[]): number {
  return xs.length < 2 ? 0 : (Math.max(...xs) - Math.min(...xs)) / median(xs);
}

export const round = (x: number, digits = 1) => Number(x.toFixed(digits));
