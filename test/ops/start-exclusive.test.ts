import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { tempDir } from '../helpers/app.ts';

/**
 * `serve` on a taken port or on a DATA_DIR another server holds: one line naming the fix, exit 2,
 * no stack trace, and (for the port) nothing created. Before: Node's unhandled EADDRINUSE trace,
 * exit 1, ./data created; two servers on one DATA_DIR both ran.
 */
function env(extra: Record<string, string>): Record<string, string> {
  const e: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env))
    if (v !== undefined && !/^(PAYMENT_MODE|FEED|PAY_TO|OFAC_|ADMIN_TOKEN|HOST|PORT|DATA_DIR|LOG_)/.test(k)) e[k] = v;
  return { ...e, LOG_LEVEL: 'error', POLL_INTERVAL_MS: '3600000', ...extra };
}

test('a taken port: one line with the fix, exit 2, DATA_DIR not created', async (t) => {
  const blocker = createServer();
  await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
  t.after(() => blocker.close());
  const port = (blocker.address() as AddressInfo).port;
  const data = join(tempDir(t), 'data');
  const r = spawnSync(process.execPath, ['src/main.ts', 'serve'], {
    env: env({ PORT: String(port), DATA_DIR: data }),
    encoding: 'utf8',
    timeout: 20_000,
  });
  assert.equal(r.status, 2, r.stderr);
  assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  assert.match(r.stderr, new RegExp(`^isocast: 127\\.0\\.0\\.1:${port} is already in use .*--port <n>\\n$`));
  assert.ok(!/at |EADDRINUSE|node:/.test(r.stderr), 'no stack trace');
  assert.equal(existsSync(data), false, 'nothing created');
});

test('a DATA_DIR another server is using: one line, exit 2; free again once that server stops', async (t) => {
  const data = join(tempDir(t), 'data');
  const first = spawn(process.execPath, ['src/main.ts', 'serve'], {
    env: env({ PORT: '0', DATA_DIR: data }),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  t.after(() => {
    if (first.exitCode === null) first.kill('SIGKILL');
  });
  let err = '';
  await new Promise<void>((resolve, reject) => {
    first.stderr!.setEncoding('utf8').on('data', (d: string) => {
      err += d;
      if (/isocast listening on/.test(err)) resolve();
    });
    first.once('exit', (code) => reject(new Error(`first server exited ${code}: ${err}`)));
  });
  const second = spawnSync(process.execPath, ['src/main.ts', 'serve'], {
    env: env({ PORT: '0', DATA_DIR: data }),
    encoding: 'utf8',
    timeout: 20_000,
  });
  assert.equal(second.status, 2, second.stderr);
  assert.equal(
    second.stderr,
    `isocast: DATA_DIR ${data} is in use by another running isocast server; stop it first, or give this one its own DATA_DIR=<dir>\n`,
  );
  // backup and doctor still work while it serves: they do not take the lock.
  const backup = spawnSync(process.execPath, ['src/main.ts', 'backup', join(data, '..', 'copy.db')], {
    env: env({ DATA_DIR: data }),
    encoding: 'utf8',
  });
  assert.equal(backup.status, 0, backup.stderr);
  first.kill('SIGTERM');
  await new Promise((r) => first.once('exit', r));
  const third = spawn(process.execPath, ['src/main.ts', 'serve'], {
    env: env({ PORT: '0', DATA_DIR: data }),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  t.after(() => {
    if (third.exitCode === null) third.kill('SIGKILL');
  });
  let err3 = '';
  await new Promise<void>((resolve, reject) => {
    third.stderr!.setEncoding('utf8').on('data', (d: string) => {
      err3 += d;
      if (/isocast listening on/.test(err3)) resolve();
    });
    third.once('exit', (code) => reject(new Error(`restart exited ${code}: ${err3}`)));
  });
  third.kill('SIGTERM');
  await new Promise((r) => third.once('exit', r));
});
