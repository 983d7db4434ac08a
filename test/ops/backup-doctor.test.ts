import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { existsSync } from 'node:fs';
import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { openDb, openReadOnly } from '../../src/db/open.ts';
import { formatReport, runDoctor } from '../../src/ops/doctor.ts';
import { loadConfig } from '../../src/config.ts';
import { listen, tempDir } from '../helpers/app.ts';

const insertSignal = (db: Database.Database, seq: number) =>
  db
    .prepare(
      'INSERT INTO signals (city, seq, target_date, new_bucket, observed_at, payload, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
    )
    .run('nyc', seq, '2026-07-15', `b${seq}`, '2026-07-15T12:00:00Z', '{}', seq);

/** `isocast backup <file>` in a child process, while this one writes. */
const backupCli = (dir: string, dest: string) =>
  promisify(execFile)(process.execPath, ['src/main.ts', 'backup', dest], { env: { ...process.env, DATA_DIR: dir } });

test('an online backup taken while another connection writes is consistent and complete', async (t) => {
  const dir = tempDir(t);
  const writer = openDb(join(dir, 'isocast.db'));
  for (let i = 1; i <= 2000; i++) insertSignal(writer, i);
  let next = 2001;
  const timer = setInterval(() => {
    for (let k = 0; k < 20; k++) insertSignal(writer, next++);
  }, 1);
  const dest = join(dir, 'backup.db');
  const result = await backupCli(dir, dest);
  clearInterval(timer);
  const [, pages] = /: (\d+) pages, integrity ok$/m.exec(result.stdout)!;
  assert.ok(Number(pages) > 0);
  const copy = new Database(dest, { readonly: true });
  const n = copy.prepare('SELECT count(*) FROM signals').pluck().get() as number;
  const max = copy.prepare('SELECT max(seq) FROM signals').pluck().get() as number;
  assert.ok(n >= 2000 && n === max, `copy holds a gapless prefix (${n} rows, max ${max})`);
  assert.equal(copy.pragma('integrity_check', { simple: true }), 'ok');
  copy.close();
  await assert.rejects(backupCli(dir, dest), /already exists/);
  assert.ok(!existsSync(`${dest}.partial`));
  writer.close();
});

test('`isocast backup <file>` from the command line', (t) => {
  const dir = tempDir(t);
  const db = openDb(join(dir, 'isocast.db'));
  insertSignal(db, 1);
  const dest = join(dir, 'copy.db');
  const r = spawnSync(process.execPath, ['src/main.ts', 'backup', dest], {
    env: { ...process.env, DATA_DIR: dir },
    encoding: 'utf8',
    timeout: 30_000,
  });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /backup written to .*integrity ok/);
  const copy = new Database(dest, { readonly: true });
  assert.equal(copy.prepare('SELECT count(*) FROM signals').pluck().get(), 1);
  copy.close();
  db.close();
  const usage = spawnSync(process.execPath, ['src/main.ts', 'backup'], {
    env: { ...process.env, DATA_DIR: dir },
    encoding: 'utf8',
    timeout: 30_000,
  });
  assert.equal(usage.status, 2);
});

test('doctor reports each check, probing only the upstreams the mode uses', async (t) => {
  const dir = tempDir(t);
  const up = await listen(t, () => new Response('{}', { status: 404 }));
  const config = loadConfig({
    DATA_DIR: dir,
    FEED: 'live',
    GAMMA_URL: up,
    CLOB_URL: up,
    METAR_URL: 'http://127.0.0.1:9',
    OFAC_LIST_PATH: join(dir, 'missing.txt'),
    PORT: '18402',
    HOST: '::1',
  });
  openDb(join(dir, 'isocast.db')).close();
  const checks = await runDoctor({
    config,
    openDb: () => openReadOnly(join(dir, 'isocast.db')),
    dbPath: join(dir, 'isocast.db'),
  });
  const by = Object.fromEntries(checks.map((c) => [c.name, c]));
  assert.equal(by.database!.status, 'ok', by.database!.detail);
  assert.equal(by['market (gamma)']!.status, 'ok');
  assert.match(by['market (gamma)']!.detail, /HTTP 404/);
  assert.equal(by['weather (metar)']!.status, 'fail');
  assert.equal(by['sanctions list']!.status, 'warn');
  assert.match(by['weather (weather.com)']!.detail, /not probed/);
  assert.equal(by.messenger!.status, 'warn');
  // The configured address, as serve would listen on it.
  assert.match(by.config!.detail, /serve listens on \[::1\]:18402 \(HOST, PORT\)$/);
  const text = formatReport(checks);
  assert.match(text, /\[FAIL\] weather \(metar\)/);
  assert.match(text, /1 check\(s\) failed/);
});
