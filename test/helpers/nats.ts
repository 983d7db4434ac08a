import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync } from 'node:fs';
import { connect as tcp } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../chaos/server.ts';

/**
 * A real nats-server with JetStream (Debian's 2.9, /usr/sbin/nats-server; .ci/run installs it) on
 * 127.0.0.1, a free port and a store directory of the test's. `kill` stops it by its PID (SIGKILL
 * by default: no clean shutdown) and `start` brings it back on the same port and store.
 */
export const NATS_SERVER = ['/usr/sbin/nats-server', '/usr/bin/nats-server'].find((p) => existsSync(p)) ?? null;

export type NatsServer = {
  url: string;
  start(): Promise<void>;
  kill(signal?: NodeJS.Signals): Promise<void>;
};

export async function startNatsServer(storeDir: string): Promise<NatsServer> {
  if (!NATS_SERVER) throw new Error('nats-server is not installed (apt-get install nats-server)');
  mkdirSync(storeDir, { recursive: true });
  const port = await freePort();
  let child: ChildProcess | null = null;
  const server: NatsServer = {
    url: `nats://127.0.0.1:${port}`,
    async start() {
      child = spawn(NATS_SERVER!, ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', storeDir], {
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let log = '';
      child.stderr!.setEncoding('utf8').on('data', (d: string) => {
        log = (log + d).slice(-4000);
      });
      const end = Date.now() + 10_000;
      for (;;) {
        if (child.exitCode !== null) throw new Error(`nats-server exited: ${log}`);
        if (await listening(port)) return;
        if (Date.now() > end) throw new Error(`nats-server not listening: ${log}`);
        await sleep(25);
      }
    },
    async kill(signal = 'SIGKILL') {
      const c = child;
      if (!c || c.exitCode !== null || c.signalCode !== null) return;
      const exited = once(c, 'exit');
      process.kill(c.pid!, signal);
      await exited;
    },
  };
  await server.start();
  return server;
}

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = tcp({ host: '127.0.0.1', port }, () => {
      s.destroy();
      resolve(true);
    });
    s.on('error', () => resolve(false));
  });
}

export const natsStore = (dir: string) => join(dir, 'nats');
