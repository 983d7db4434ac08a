import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { MIGRATIONS, migrate } from '../../src/db/migrate.ts';
import { signalSchema } from '../../src/signals/schemas.ts';
import { tempDir } from '../helpers/app.ts';
import { signalPayload } from '../helpers/signals.ts';

test('0009: signals stored before it get reported_at NULL and "reportedAt": null in their payload, nothing else changes', (t) => {
  const db = new Database(join(tempDir(t), 'old.db'));
  const before = MIGRATIONS.indexOf('0009_report_time.sql');
  assert.ok(before > 0);
  migrate(db, { target: before, fromSchemaFile: false });
  // The payload as it was then: no reportedAt, and none of 0019's provenance fields (provenance.test.ts).
  const {
    reportedAt: _,
    channel,
    rawReport,
    reportedValue,
    reportedUnit,
    reportedPrecision,
    availableAt,
    storedAt,
    ...old
  } = signalPayload('nyc', 1);
  db.prepare(
    'INSERT INTO signals (city, seq, target_date, new_bucket, observed_at, payload, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
  ).run('nyc', 1, old.targetDate, old.new.bucket, old.observedAt, JSON.stringify(old), 1);
  migrate(db, { target: MIGRATIONS.indexOf('0019_signal_provenance.sql'), fromSchemaFile: false });
  const row = db.prepare('SELECT reported_at, payload FROM signals').get() as {
    reported_at: string | null;
    payload: string;
  };
  assert.equal(row.reported_at, null);
  const payload = JSON.parse(row.payload);
  assert.deepEqual(payload, { ...old, reportedAt: null });
  migrate(db);
  const now = JSON.parse(db.prepare('SELECT payload FROM signals').pluck().get() as string);
  assert.deepEqual(signalSchema().parse(now), now);
  db.close();
});
