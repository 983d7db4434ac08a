import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { MIGRATIONS, migrate } from '../../src/db/migrate.ts';
import { signalSchema } from '../../src/signals/schemas.ts';
import { tempDir } from '../helpers/app.ts';
import { signalPayload } from '../helpers/signals.ts';

test('0019: old signals answer null for what they never recorded, their channel and storedAt from what they did', (t) => {
  const db = new Database(join(tempDir(t), 'old.db'));
  migrate(db, { target: MIGRATIONS.indexOf('0019_signal_provenance.sql'), fromSchemaFile: false });
  const insert = db.prepare(
    'INSERT INTO signals (city, seq, target_date, new_bucket, observed_at, reported_at, payload, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
  );
  const olds = (['wu', 'metar', 'sim', 'other'] as const).map((source, i) => {
    const { channel, rawReport, reportedValue, reportedUnit, reportedPrecision, availableAt, storedAt, ...old } =
      signalPayload('nyc', i + 1);
    const o = { ...old, source };
    insert.run(
      'nyc',
      i + 1,
      o.targetDate,
      o.new.bucket,
      o.observedAt,
      o.reportedAt,
      JSON.stringify(o),
      1_784_127_602_007 + i,
    );
    return o;
  });
  migrate(db);
  const rows = db.prepare('SELECT channel, raw_report, available_at, payload FROM signals ORDER BY seq').all() as {
    channel: string | null;
    raw_report: string | null;
    available_at: string | null;
    payload: string;
  }[];
  assert.deepEqual(
    rows.map((r) => r.channel),
    ['wu', 'metar-api', 'sim', null],
  );
  rows.forEach((r, i) => {
    const payload = JSON.parse(r.payload);
    assert.deepEqual(payload, {
      ...olds[i],
      channel: r.channel,
      rawReport: null,
      reportedValue: null,
      reportedUnit: null,
      reportedPrecision: null,
      availableAt: null,
      storedAt: new Date(1_784_127_602_007 + i).toISOString(),
    });
    assert.deepEqual(signalSchema().parse(payload), payload);
    assert.equal(r.raw_report, null);
    assert.equal(r.available_at, null);
  });
  db.close();
});
