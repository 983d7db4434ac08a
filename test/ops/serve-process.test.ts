import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../helpers/app.ts';
import { secureDataDir } from '../../src/db/files.ts';

/**
 * The real process under the umask a login shell or cron gives (022): the start line, mock mode's
 * loopback default and its `mode` everywhere a buyer looks, the modes of every file it creates,
 * and the sanctions list reloaded on SIGHUP while serving.
 */
process.umask(0o022);

const A = '0x' + 'a1'.repeat(20);
const B = '0x' + 'b2'.repeat(20);
const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);

function cleanEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env))
    if (v !== undefined && !/^(PAYMENT_MODE|FEED|PAY_TO|OFAC_|ADMIN_TOKEN|HOST|PORT|DATA_DIR)/.test(k)) env[k] = v;
  return env;
}

type Proc = { child: ChildProcess; url: string; startLine: string; stderr: () => string; stdout: () => string };

async function start(t: { after(fn: () => void): void }, env: Record<string, string>): Promise<Proc> {
  const child = spawn(process.execPath, ['src/main.ts', 'serve'], {
    env: { ...cleanEnv(), PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.after(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  let err = '';
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => {
    out += d;
  });
  child.stderr!.setEncoding('utf8');
  const line = await new Promise<string>((resolve, reject) => {
    child.stderr!.on('data', (d: string) => {
      err += d;
      const m = /isocast listening on .*/.exec(err);
      if (m) resolve(m[0]);
    });
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${err}`)));
  });
  const url = /http:\/\/[^\s]+/.exec(line)![0];
  return { child, url, startLine: line, stderr: () => err, stdout: () => out };
}

const getJson = async (url: string): Promise<any> => (await fetch(url)).json();

async function until<T>(what: string, fn: () => Promise<T | undefined> | T | undefined, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test('mock serve: loopback by default, one start line, mode everywhere, private files, SIGHUP reloads the list', async (t) => {
  const dir = tempDir(t);
  const data = join(dir, 'data');
  const list = join(dir, 'sdn.txt');
  writeFileSync(list, `${A}\n`);
  const p = await start(t, { DATA_DIR: data, OFAC_LIST_PATH: list, LOG_LEVEL: 'info', POLL_INTERVAL_MS: '3600000' });

  assert.match(
    p.startLine,
    new RegExp(
      `^isocast listening on http://127\\.0\\.0\\.1:\\d+ {2}payment mode: mock {2}feed: sim \\(simulated weather and markets, 60x speed\\) {2}37 cities, 37 low streams {2}data: ${data}$`,
    ),
  );
  assert.ok(!p.stderr().includes('WARNING'), 'no exposure banner on loopback');
  assert.ok(
    p
      .stdout()
      .split('\n')
      .filter(Boolean)
      .every((l) => l.startsWith('{')),
    'stdout stays JSON lines',
  );

  const health = await getJson(`${p.url}/health`);
  assert.equal(health.mode, 'mock');
  assert.equal(health.ofac.listLoaded, true);
  assert.equal(health.ofac.count, 1);
  assert.ok(Number.isInteger(health.ofac.ageSeconds) && health.ofac.ageSeconds >= 0 && health.ofac.ageSeconds < 60);
  const challenge = await fetch(`${p.url}/v1/subscribe?city=nyc&count=20`, { method: 'POST' });
  assert.equal(challenge.status, 402);
  const body = (await challenge.json()) as any;
  assert.equal(body.extra.mode, 'mock');
  assert.equal(body.accepts[0].extra.mode, 'mock');
  const manifest = await getJson(`${p.url}/.well-known/x402`);
  assert.equal(manifest.mode, 'mock');
  assert.ok(manifest.items.every((i: any) => i.accepts.every((a: any) => a.extra.mode === 'mock')));

  // Files, under umask 022: the process set its own.
  assert.equal(mode(data), '700');
  for (const f of ['isocast.db', 'isocast.db-wal', 'isocast.db-shm', 'server-secret'])
    assert.equal(mode(join(data, f)), '600', f);

  // SIGHUP: a new list is taken at once.
  writeFileSync(list, `${A}\n${B}\n`);
  p.child.kill('SIGHUP');
  await until('the reloaded list', async () =>
    (await getJson(`${p.url}/health`)).ofac.count === 2 ? true : undefined,
  );
  // An empty file is kept out: the last good list stays, with a warning.
  writeFileSync(list, '');
  p.child.kill('SIGHUP');
  await until('the warning', () =>
    p.stdout().includes('sanctions list not reloaded; the previous list stays in force') ? true : undefined,
  );
  const after = await getJson(`${p.url}/health`);
  assert.deepEqual([after.ofac.listLoaded, after.ofac.count], [true, 2]);
  const warn = JSON.parse(
    p
      .stdout()
      .split('\n')
      .find((l) => l.includes('not reloaded'))!,
  );
  assert.equal(warn.level, 'warn');
  assert.equal(warn.reason, 'SIGHUP');

  p.child.kill('SIGTERM');
  const code = await new Promise((r) => p.child.once('exit', r));
  assert.equal(code, 0);

  // backup and migrate under the same umask.
  const copy = join(dir, 'backup.db');
  const b = spawnSync(process.execPath, ['src/main.ts', 'backup', copy], {
    env: { ...cleanEnv(), DATA_DIR: data },
    encoding: 'utf8',
    timeout: 30_000,
  });
  assert.equal(b.status, 0, b.stderr);
  assert.equal(mode(copy), '600');
  const fresh = join(dir, 'fresh');
  const m = spawnSync(process.execPath, ['src/main.ts', 'migrate'], {
    env: { ...cleanEnv(), DATA_DIR: fresh },
    encoding: 'utf8',
    timeout: 30_000,
  });
  assert.equal(m.status, 0, m.stderr);
  assert.equal(mode(fresh), '700');
  assert.equal(mode(join(fresh, 'isocast.db')), '600');
});

test('mock mode on an explicit non-loopback HOST starts with a warning banner', async (t) => {
  const dir = tempDir(t);
  const p = await start(t, {
    DATA_DIR: join(dir, 'data'),
    HOST: '0.0.0.0',
    LOG_LEVEL: 'error',
    POLL_INTERVAL_MS: '3600000',
  });
  assert.match(p.startLine, /http:\/\/0\.0\.0\.0:\d+ {2}payment mode: mock/);
  assert.match(
    p.stderr(),
    /WARNING: mock payment mode is listening on 0\.0\.0\.0, reachable from other machines\. Payments are simulated/,
  );
});

test('a data directory an older version left open is tightened; a shared parent is left alone', (t) => {
  const dir = tempDir(t);
  const data = join(dir, 'data');
  mkdirSync(data, { mode: 0o755 });
  writeFileSync(join(data, 'isocast.db'), '', { mode: 0o644 });
  writeFileSync(join(data, 'server-secret'), 'x', { mode: 0o644 });
  chmodSync(data, 0o755);
  secureDataDir(data);
  assert.deepEqual(
    [mode(data), mode(join(data, 'isocast.db')), mode(join(data, 'server-secret'))],
    ['700', '600', '600'],
  );
  // A shared parent holds other things: its mode is the operator's, our files in it are still private.
  const shared = join(dir, 'shared');
  mkdirSync(shared, { mode: 0o755 });
  chmodSync(shared, 0o755);
  writeFileSync(join(shared, 'notes.txt'), 'x', { mode: 0o644 });
  writeFileSync(join(shared, 'isocast.db'), '', { mode: 0o644 });
  secureDataDir(shared);
  assert.deepEqual(
    [mode(shared), mode(join(shared, 'notes.txt')), mode(join(shared, 'isocast.db'))],
    ['755', '644', '600'],
  );
});

test('first run: a pre-created 0777 DATA_DIR is 0700 before the database file exists (issue 23.8)', (t) => {
  const dir = tempDir(t);
  const data = join(dir, 'precreated');
  mkdirSync(data);
  chmodSync(data, 0o777);
  mkdirSync(join(data, 'lost+found'));
  // The real first run: `isocast migrate` creates the database (an older version left the
  // directory 0777 until the second start, because it held none of our files yet).
  const m = spawnSync(process.execPath, ['src/main.ts', 'migrate'], {
    env: { ...cleanEnv(), DATA_DIR: data },
    encoding: 'utf8',
    timeout: 30_000,
  });
  assert.equal(m.status, 0, m.stderr);
  assert.deepEqual([mode(data), mode(join(data, 'isocast.db'))], ['700', '600']);
  // The order inside one process: secureDataDir first, then the database is opened.
  const again = join(dir, 'again');
  mkdirSync(again);
  chmodSync(again, 0o777);
  secureDataDir(again);
  assert.equal(mode(again), '700');
  assert.equal(existsSync(join(again, 'isocast.db')), false);
});
