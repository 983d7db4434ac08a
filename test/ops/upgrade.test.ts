import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { copyFileSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import Database from 'better-sqlite3';
import { SCHEMA_VERSION, migrate, schemaVersion } from '../../src/db/migrate.ts';
import { tempDir } from '../helpers/app.ts';

/**
 * The upgrade path of docs/operations.md, through the real command line: a database at an older
 * schema version is backed up without being migrated, the new build migrates it at start, and
 * restoring the backup gives back the old file byte-for-byte in content and version.
 */
const cli = (dir: string, ...args: string[]) =>
  spawnSync(process.execPath, ['src/main.ts', ...args], {
    env: { ...process.env, DATA_DIR: dir },
    encoding: 'utf8',
    timeout: 30_000,
  });

test('upgrade: backup keeps the old schema, start migrates, restoring the backup rolls back', (t) => {
  const dir = tempDir(t);
  const live = join(dir, 'isocast.db');
  const old = SCHEMA_VERSION - 1;
  const db = new Database(live);
  db.pragma('journal_mode = WAL');
  migrate(db, { target: old, fromSchemaFile: false });
  db.prepare(
    'INSERT INTO signals (city, seq, target_date, new_bucket, observed_at, payload, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
  ).run('nyc', 1, '2026-07-15', '70-71°F', '2026-07-15T12:00:00Z', '{}', 1);
  db.close();

  const backup = join(dir, 'before-upgrade.db');
  const b = cli(dir, 'backup', backup);
  assert.equal(b.status, 0, b.stderr);
  const readVersion = (path: string) => {
    const d = new Database(path, { readonly: true });
    try {
      return [schemaVersion(d), d.prepare('SELECT count(*) FROM signals').pluck().get()];
    } finally {
      d.close();
    }
  };
  assert.deepEqual(readVersion(live), [old, 1], 'backing up does not migrate the live file');
  assert.deepEqual(readVersion(backup), [old, 1]);

  const m = cli(dir, 'migrate');
  assert.equal(m.status, 0, m.stderr);
  assert.match(m.stdout, new RegExp(`schema at version ${SCHEMA_VERSION}`));
  assert.deepEqual(readVersion(live), [SCHEMA_VERSION, 1]);

  // Rollback: the service is stopped, the WAL files go with the file they belong to.
  for (const suffix of ['', '-wal', '-shm']) rmSync(live + suffix, { force: true });
  copyFileSync(backup, live);
  assert.deepEqual(readVersion(live), [old, 1]);

  // A database newer than the build is refused rather than guessed at.
  const newer = new Database(live);
  newer.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
  newer.close();
  const refused = cli(dir, 'migrate');
  assert.equal(refused.status, 1);
  assert.match(refused.stderr, /newer than this build/);
});

test('backup refuses a missing database instead of creating an empty one', (t) => {
  const dir = tempDir(t);
  const r = cli(dir, 'backup', join(dir, 'copy.db'));
  assert.equal(r.status, 1);
  assert.match(r.stderr, /no database at /);
});
