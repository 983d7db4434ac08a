import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { openDb, type Db } from '../../src/db/open.ts';
import { memoryLogger } from '../helpers/logger.ts';
import { createMetrics } from '../../src/lib/metrics.ts';
import { startReplication } from '../../src/replication/supervisor.ts';
import { describePosition, replicaPosition } from '../chaos/machine-loss.ts';
import { LITESTREAM } from '../chaos/replica-drill.ts';
import { processesUnder, until, walSalt } from './helpers.ts';

const autocheckpoint = (db: Db) => db.pragma('wal_autocheckpoint', { simple: true }) as number;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function scratch(t: { after(fn: () => void): void }) {
  const dir = mkdtempSync(join(tmpdir(), 'isocast-repl-'));
  const path = join(dir, 'data', 'isocast.db');
  const db = openDb(path, { migrate: false });
  db.exec('CREATE TABLE ledger (id INTEGER PRIMARY KEY, body BLOB NOT NULL)');
  t.after(() => {
    if (db.open) db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { dir, dataDir: join(dir, 'data'), path, db, replica: join(dir, 'replica') };
}

test('Litestream is the only checkpointer under load, restarts the WAL, and its replica restores every commit it received, with no gap', async (t) => {
  const s = scratch(t);
  const logger = memoryLogger('info');
  const rep = startReplication({
    bin: LITESTREAM,
    dataDir: s.dataDir,
    dbPath: s.path,
    settings: { REPLICA_URL: s.replica, REPLICA_SYNC_INTERVAL_MS: 1000 },
    db: s.db,
    logger,
  });
  // Its guidance for applications that checkpoint: leave the checkpoints to it.
  assert.equal(autocheckpoint(s.db), 0);
  assert.equal(statSync(join(s.dataDir, 'litestream.yml')).mode & 0o777, 0o600);
  await until('the first upload', () => rep.status().lastSyncAt !== null);

  const insert = s.db.prepare('INSERT INTO ledger (id, body) VALUES (?, ?)');
  const committedAt: number[] = [];
  let restarts = 0;
  let salt = walSalt(`${s.path}-wal`);
  // Tens of pages a commit, until Litestream's checkpoints have restarted the WAL three times
  // (a slow shared machine gets longer, never fewer checkpoints).
  const end = Date.now() + 30_000;
  for (let id = 1; restarts < 3 && Date.now() < end; id++) {
    insert.run(id, randomBytes(100_000));
    committedAt[id] = Date.now();
    const now = walSalt(`${s.path}-wal`);
    if (now && salt && now !== salt) restarts++;
    salt = now ?? salt;
    await sleep(2);
  }
  // Commits go on for a second after the last checkpoint seen, then the machine dies.
  const more = Date.now() + 1_500;
  for (let id = committedAt.length; Date.now() < more; id++) {
    insert.run(id, randomBytes(100_000));
    committedAt[id] = Date.now();
    await sleep(2);
  }
  // The machine dies: Litestream too, with no final sync.
  const killAt = Date.now();
  for (const pid of processesUnder(process.pid, 'litestream')) process.kill(pid, 'SIGKILL');
  await rep.stop();
  s.db.close();
  const position = replicaPosition(s.replica);

  const out = join(s.dir, 'restored.db');
  execFileSync(LITESTREAM, ['restore', '-config', join(s.dataDir, 'litestream.yml'), '-o', out, s.path], {
    stdio: 'ignore',
  });
  const restored = new Database(out, { readonly: true });
  const ids = new Set(restored.prepare('SELECT id FROM ledger').pluck().all() as number[]);
  restored.close();
  // Every commit the replica had received (machine-loss.ts), and a restore is the database as of
  // one commit: ids 1..n with no gap. What it lacks is the lag at the kill, longer under load.
  const required = committedAt.flatMap((at, id) => (at !== undefined && at < position.heldUntil ? [id] : []));
  const missing = required.filter((id) => !ids.has(id));
  process.stdout.write(
    `# ${committedAt.length - 1} commits, ${restarts} WAL restarts by Litestream's checkpoints, ${ids.size} restored, ${missing.length} of the ${required.length} the replica held missing; ${describePosition(position, killAt, 'the kill')}\n`,
  );
  assert.ok(restarts >= 3, `Litestream restarted the WAL only ${restarts} times`);
  assert.ok(required.length > 0, 'the replica held commits');
  assert.deepEqual(missing, []);
  assert.deepEqual(
    [...ids].sort((a, b) => a - b),
    Array.from({ length: ids.size }, (_, i) => i + 1),
    'no gap',
  );
});

test('a Litestream that dies is restarted with backoff; stop leaves no process behind', async (t) => {
  const s = scratch(t);
  const logger = memoryLogger('info');
  const metrics = createMetrics();
  const rep = startReplication({
    bin: LITESTREAM,
    dataDir: s.dataDir,
    dbPath: s.path,
    settings: { REPLICA_URL: s.replica, REPLICA_SYNC_INTERVAL_MS: 1000 },
    db: s.db,
    logger,
    metrics,
  });
  t.after(() => rep.stop());
  await until('the first upload', () => rep.status().lastSyncAt !== null);
  const [first] = processesUnder(process.pid, 'litestream');
  assert.ok(first);
  process.kill(first, 'SIGKILL');
  await until('the exit to be seen', () => !rep.status().up);
  // While it is down SQLite's own checkpoints come back, so the WAL stays bounded.
  assert.equal(autocheckpoint(s.db), 1000);
  await until('a new litestream', () => rep.status().up && processesUnder(process.pid, 'litestream').length === 1);
  assert.equal(autocheckpoint(s.db), 0);
  assert.ok(logger.lines.some((l) => l.includes('litestream exited; restarting') && l.includes('"restartInMs":1000')));
  assert.match(metrics.render(), /^isocast_replication_failures_total 1$/m);
  const synced = rep.status().lastSyncAt;
  s.db.prepare("INSERT INTO ledger (id, body) VALUES (1, x'00')").run();
  // The new Litestream uploads the commit; then the stop gets its final sync and a clean exit.
  await until('an upload by the new litestream', () => (rep.status().lastSyncAt ?? 0) > (synced ?? 0));
  await rep.stop();
  assert.deepEqual(processesUnder(process.pid, 'litestream'), []);
  assert.ok(
    logger.lines.some((l) => l.includes('litestream: litestream shut down')),
    logger.lines.join('\n'),
  );
});

test('a failing replica warns once a minute, not once a sync', async (t) => {
  const s = scratch(t);
  const logger = memoryLogger('debug');
  const metrics = createMetrics();
  // The replica's parent is a regular file: every upload fails at once.
  writeFileSync(join(s.dir, 'not-a-dir'), '');
  const rep = startReplication({
    bin: LITESTREAM,
    dataDir: s.dataDir,
    dbPath: s.path,
    settings: { REPLICA_URL: join(s.dir, 'not-a-dir', 'replica'), REPLICA_SYNC_INTERVAL_MS: 200 },
    db: s.db,
    logger,
    metrics,
  });
  t.after(() => rep.stop());
  const insert = s.db.prepare('INSERT INTO ledger (body) VALUES (?)');
  for (let i = 0; rep.status().failures < 5; i++) {
    if (i > 300) assert.fail(`only ${rep.status().failures} failures seen`);
    insert.run(randomBytes(100));
    await sleep(100);
  }
  const folded = logger.lines.filter((l) => l.includes('"component":"litestream"') && l.includes('"level":"warn"'));
  // One folded Litestream error and one "not syncing" line, whatever the failure rate.
  assert.equal(folded.filter((l) => l.includes('replica not syncing')).length, 1, folded.join('\n'));
  assert.equal(folded.filter((l) => !l.includes('replica not syncing')).length, 1, folded.join('\n'));
  assert.match(metrics.render(), /^isocast_replication_failures_total ([5-9]|\d\d+)$/m);
  assert.ok(rep.status().lastError);
});

test('a replica that keeps failing warns once each minute, for minutes on end, whatever its failure rate', async (t) => {
  const s = scratch(t);
  const logger = memoryLogger('debug');
  const metrics = createMetrics();
  writeFileSync(join(s.dir, 'not-a-dir'), '');
  // The supervisor's clock runs 60 times faster than the real one: a minute a second, while
  // Litestream fails for real every 200 ms (five failures to each simulated minute).
  const realStart = Date.now();
  const now = () => realStart + (Date.now() - realStart) * 60;
  const rep = startReplication({
    bin: LITESTREAM,
    dataDir: s.dataDir,
    dbPath: s.path,
    settings: { REPLICA_URL: join(s.dir, 'not-a-dir', 'replica'), REPLICA_SYNC_INTERVAL_MS: 200 },
    db: s.db,
    logger,
    metrics,
    now,
  });
  t.after(() => rep.stop());
  const insert = s.db.prepare('INSERT INTO ledger (body) VALUES (?)');
  await until('the first failure', () => rep.status().failures > 0);
  const from = now();
  while (now() - from < 4 * 60_000) {
    insert.run(randomBytes(100));
    await sleep(100);
  }
  const minutes = (now() - from) / 60_000;
  const failures = rep.status().failures;
  await rep.stop();
  const warn = logger.lines.filter((l) => l.includes('"component":"litestream"') && l.includes('"level":"warn"'));
  const stalls = warn.filter((l) => l.includes('replica not syncing'));
  const folded = warn.filter((l) => l.includes('"msg":"litestream: '));
  const detail = `${failures} failures in ${minutes.toFixed(1)} simulated minutes\n${warn.join('\n')}`;
  assert.ok(failures >= 2 * minutes, detail);
  // One of each a minute (the first at once), never one a failure.
  for (const lines of [stalls, folded]) {
    assert.ok(lines.length >= Math.floor(minutes), detail);
    assert.ok(lines.length <= Math.ceil(minutes) + 1, detail);
  }
  const summed = stalls.reduce(
    (n, l) => n + (JSON.parse(l) as { failuresSinceLastWarning: number }).failuresSinceLastWarning,
    0,
  );
  assert.ok(summed > stalls.length, `the warnings sum the failures between them: ${summed}`);
});

test('an s3 replica: the yml holds the secret (0600), no log line does', async (t) => {
  const s = scratch(t);
  const logger = memoryLogger('debug');
  const secret = `S3CR3T-${randomBytes(8).toString('hex')}`;
  const rep = startReplication({
    bin: LITESTREAM,
    dataDir: s.dataDir,
    dbPath: s.path,
    settings: {
      REPLICA_URL: 's3://bucket/isocast',
      REPLICA_SYNC_INTERVAL_MS: 1000,
      REPLICA_ENDPOINT: 'http://127.0.0.1:9',
      REPLICA_REGION: 'us-east-1',
      REPLICA_ACCESS_KEY_ID: 'AKIDTEST',
      REPLICA_SECRET_ACCESS_KEY: secret,
    },
    db: s.db,
    logger,
  });
  t.after(() => rep.stop());
  await until('Litestream to name its replica', () => logger.lines.some((l) => l.includes('replicating to')));
  const yml = join(s.dataDir, 'litestream.yml');
  assert.equal(statSync(yml).mode & 0o777, 0o600);
  assert.match(readFileSync(yml, 'utf8'), new RegExp(secret));
  assert.ok(!logger.lines.some((l) => l.includes(secret)));
  assert.ok(!readFileSync(`/proc/${processesUnder(process.pid, 'litestream')[0]}/environ`, 'utf8').includes(secret));
});
