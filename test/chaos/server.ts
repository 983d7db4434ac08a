import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, type WriteStream } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * One real `isocast serve` process (src/main.ts on Node 24) over a fixed DATA_DIR. It can be
 * started, killed with SIGKILL (no cleanup runs: no shutdown hook, no final checkpoint) and
 * started again on the same directory. Its stdout and stderr are appended to `server.log` there.
 */
const ROOT = join(import.meta.dirname, '..', '..');
const NODE = join(ROOT, 'node_modules', '.bin', 'node');
const MAIN = join(ROOT, 'src', 'main.ts');

export async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', () => resolve()));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

export type ServerProcess = {
  readonly baseUrl: string;
  readonly pid: number;
  /** Resolves when the process has exited; the exit code, or the signal name. */
  readonly exited: Promise<string>;
  kill(signal?: NodeJS.Signals): Promise<string>;
};

export async function startServer(opts: {
  dataDir: string;
  env: Record<string, string>;
  readyTimeoutMs?: number;
}): Promise<ServerProcess> {
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const log: WriteStream = createWriteStream(join(opts.dataDir, 'server.log'), { flags: 'a' });
  const child: ChildProcess = spawn(NODE, [MAIN, 'serve'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      DATA_DIR: opts.dataDir,
      HOST: '127.0.0.1',
      PORT: String(port),
      BASE_URL: baseUrl,
      ...opts.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.pipe(log, { end: false });
  child.stderr!.pipe(log, { end: false });
  const exited = once(child, 'exit').then(([code, signal]) => {
    log.end();
    return signal ? String(signal) : String(code);
  });
  const deadline = Date.now() + (opts.readyTimeoutMs ?? 20_000);
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`server exited during start-up (${await exited}); see ${join(opts.dataDir, 'server.log')}`);
    try {
      const res = await fetch(`${baseUrl}/health`, { signal: AbortSignal.timeout(1_000) });
      await res.body?.cancel();
      if (res.status === 200) break;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`server not ready after ${opts.readyTimeoutMs ?? 20_000} ms`);
    }
    await sleep(25);
  }
  return {
    baseUrl,
    pid: child.pid!,
    exited,
    kill: async (signal = 'SIGKILL') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}
