import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { statSync, readFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { openDb } from '../../src/db/open.ts';
import { MIGRATIONS, SCHEMA_VERSION, migrate, schemaVersion } from '../../src/db/migrate.ts';
import { loadOrCreateSecret } from '../../src/db/files.ts';
import { tempDir } from '../helpers/app.ts';

/** Normalised DDL of every object, for comparing a fresh and a migrated database. */
function schemaFingerprint(db: Database.Database): string[] {
  const rows = db
    .prepare("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name")
    .all() as { type: string; name: string; sql: string | null }[];
  return rows.map((r) => `${r.type} ${r.name}: ${(r.sql ?? '').replace(/\s+/g, ' ').trim()}`);
}

test('a fresh schema.sql database and a fully migrated one have the same schema', (t) => {
  const dir = tempDir(t);
  const fresh = openDb(join(dir, 'fresh.db'));
  const stepped = new Database(join(dir, 'stepped.db'));
  migrate(stepped, { fromSchemaFile: false });
  assert.equal(schemaVersion(fresh), SCHEMA_VERSION);
  assert.equal(schemaVersion(stepped), SCHEMA_VERSION);
  assert.deepEqual(schemaFingerprint(stepped), schemaFingerprint(fresh));
  fresh.close();
  stepped.close();
});

test('an older database steps forward one migration at a time to the current version', (t) => {
  const dir = tempDir(t);
  for (let from = 1; from < SCHEMA_VERSION; from++) {
    const db = new Database(join(dir, `v${from}.db`));
    migrate(db, { target: from, fromSchemaFile: false });
    assert.equal(schemaVersion(db), from);
    const result = migrate(db);
    assert.deepEqual(result, { from, to: SCHEMA_VERSION });
    db.close();
  }
  assert.equal(MIGRATIONS.length, SCHEMA_VERSION);
});

test('open sets WAL, NORMAL sync, foreign keys and a busy timeout; reopening does not migrate twice', (t) => {
  const dir = tempDir(t);
  const path = join(dir, 'isocast.db');
  const db = openDb(path);
  assert.equal(db.pragma('journal_mode', { simple: true }), 'wal');
  assert.equal(db.pragma('synchronous', { simple: true }), 1);
  assert.equal(db.pragma('foreign_keys', { simple: true }), 1);
  assert.equal(db.pragma('busy_timeout', { simple: true }), 5000);
  db.close();
  const again = openDb(path);
  assert.equal(schemaVersion(again), SCHEMA_VERSION);
  again.close();
});

test('a database from a newer build is refused rather than damaged', (t) => {
  const dir = tempDir(t);
  const db = new Database(join(dir, 'future.db'));
  db.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
  assert.throws(() => migrate(db), /newer than this build/);
  db.close();
});

test('the server secret is generated once with mode 0600 and reused', (t) => {
  const dir = tempDir(t);
  const a = loadOrCreateSecret(dir);
  const b = loadOrCreateSecret(dir);
  assert.equal(a.length, 32);
  assert.deepEqual(a, b);
  const mode = statSync(join(dir, 'server-secret')).mode & 0o777;
  assert.equal(mode, 0o600);
  assert.match(readFileSync(join(dir, 'server-secret'), 'utf8'), /^[0-9a-f]{64}\n$/);
  const configured = loadOrCreateSecret(dir, 'ab'.repeat(32));
  assert.equal(configured.toString('hex'), 'ab'.repeat(32));
});
