import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, type WriteStream } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { compileCacheEnv } from '../helpers/child-env.ts';

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

/** Start-up attempts when the port freePort picked is taken before the child binds it. */
const PORT_ATTEMPTS = 5;
/**
 * How long a start may take: about 2 s of CPU, which a loaded 2-core machine stretches (13 to 18 s
 * measured beside six busy loops, the whole suite's load or more), so 20 s failed starts that
 * were only slow.
 */
const READY_TIMEOUT_MS = 60_000;

/**
 * Starts `serve` and resolves once that child, and no one else, answers on its port. freePort's
 * port is free only when it is picked: until the child binds it, any process on the machine may
 * be given it (bind to port 0), and a test server of another file answering /health there would
 * pass for this child while the child exits "already in use". So the child must print its own
 * "isocast listening on <url>" line first; a child that lost its port is started again on another.
 */
export async function startServer(opts: {
  dataDir: string;
  env: Record<string, string>;
  readyTimeoutMs?: number;
}): Promise<ServerProcess> {
  for (let attempt = 1; ; attempt++) {
    const started = await startOnce(opts);
    if (started !== 'port taken') return started;
    if (attempt === PORT_ATTEMPTS)
      throw new Error(`${PORT_ATTEMPTS} free ports were each taken before serve bound them`);
  }
}

async function startOnce(opts: {
  dataDir: string;
  env: Record<string, string>;
  readyTimeoutMs?: number;
}): Promise<ServerProcess | 'port taken'> {
  const port = await freePort();
  const env = {
    PATH: process.env.PATH ?? '',
    ...compileCacheEnv(),
    DATA_DIR: opts.dataDir,
    HOST: '127.0.0.1',
    PORT: String(port),
    ...opts.env,
  };
  const baseUrl = `http://127.0.0.1:${env.PORT}`;
  const log: WriteStream = createWriteStream(join(opts.dataDir, 'server.log'), { flags: 'a' });
  const child: ChildProcess = spawn(NODE, [MAIN, 'serve'], {
    cwd: ROOT,
    env: { BASE_URL: baseUrl, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.pipe(log, { end: false });
  child.stderr!.pipe(log, { end: false });
  // serve writes this line once its listener is bound (src/serve.ts); stderr is kept only until then.
  let stderr = '';
  let listening = false;
  const watch = (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
    if (stderr.includes(`isocast listening on ${baseUrl} `)) {
      listening = true;
      child.stderr!.off('data', watch);
    }
  };
  child.stderr!.on('data', watch);
  const exited = once(child, 'exit').then(([code, signal]) => {
    log.end();
    return signal ? String(signal) : String(code);
  });
  const deadline = Date.now() + (opts.readyTimeoutMs ?? READY_TIMEOUT_MS);
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      const exit = await exited;
      if (!listening && stderr.includes(`:${env.PORT} is already in use`)) return 'port taken';
      throw new Error(`server exited during start-up (${exit}); see ${join(opts.dataDir, 'server.log')}`);
    }
    if (listening) {
      try {
        const res = await fetch(`${baseUrl}/health`, { signal: AbortSignal.timeout(1_000) });
        await res.body?.cancel();
        if (res.status === 200) break;
      } catch {
        /* not answering yet */
      }
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`server not ready after ${opts.readyTimeoutMs ?? READY_TIMEOUT_MS} ms`);
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
