import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tempDir } from '../helpers/app.ts';

/**
 * A serving process out of file descriptors (a connection flood under a low `ulimit -n`): libuv
 * drops the connections it cannot accept, and once descriptors are free again the same process
 * answers. Accept errors that do reach the listener are counted and logged
 * (test/ops/listener.test.ts); neither ends the process.
 */
const LIMIT = 256;

test('a connection flood past the descriptor limit does not stop the server: it answers once they are freed', async (t) => {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env))
    if (v !== undefined && !/^(ISOCAST|PAYMENT_MODE|FEED)/.test(k)) env[k] = v;
  const child = spawn('sh', ['-c', `ulimit -n ${LIMIT} && exec "$0" src/main.ts serve`, process.execPath], {
    env: {
      ...env,
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: tempDir(t),
      MAX_CONNECTIONS_PER_ADDRESS: '10000',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.after(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  let err = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr!.setEncoding('utf8').on('data', (d: string) => {
      err += d;
      const m = /isocast listening on (http:\/\/\S+)/.exec(err);
      if (m) resolve(m[1]!.replace(/\/$/, ''));
    });
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${err}`)));
  });
  const port = Number(new URL(url).port);
  const used = readdirSync(`/proc/${child.pid}/fd`).length;
  const sockets: Socket[] = [];
  const opened = (s: Socket) => new Promise<void>((resolve) => s.once('connect', resolve).once('error', resolve));
  for (let i = 0; i < LIMIT - used + 20; i++) {
    const s = connect({ host: '127.0.0.1', port });
    s.on('error', () => {});
    sockets.push(s);
    await opened(s);
  }
  // Every descriptor the process may have is taken, and more connections are waiting.
  const fds = () => readdirSync(`/proc/${child.pid}/fd`).length;
  for (let i = 0; i < 100 && fds() < LIMIT; i++) await new Promise((r) => setTimeout(r, 50));
  assert.equal(fds(), LIMIT);
  for (const s of sockets) s.destroy();
  assert.equal(child.exitCode, null);
  // Descriptors free again: the same process answers.
  let health: Response | undefined;
  for (let i = 0; i < 100 && !health; i++)
    health = await fetch(`${url}/health`).catch(async () => {
      await new Promise((r) => setTimeout(r, 50));
      return undefined;
    });
  assert.equal(health!.status, 200);
  assert.equal(child.exitCode, null);
});
