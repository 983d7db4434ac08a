import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openDb } from '../../src/db/open.ts';
import { tempDir } from '../helpers/app.ts';
import { createStores } from '../../src/stores.ts';

function setup(t: { after(fn: () => void): void }) {
  const db = openDb(join(tempDir(t), 'isocast.db'));
  t.after(() => db.close());
  const insert = db.prepare(
    'INSERT INTO signals (city, seq, target_date, new_bucket, observed_at, payload, created_at) VALUES (?, ?, ?, ?, ?, ?, 0)',
  );
  const add = (city: string, seq: number) =>
    insert.run(city, seq, '2026-07-15', `b${seq}`, '2026-07-15T15:00:00.000Z', JSON.stringify({ city, seq }));
  return { db, add, reader: createStores(db).reader };
}

test('the remembered latest seq follows every write on the connection, per city', (t) => {
  const { add, reader } = setup(t);
  assert.equal(reader.latestSeq('nyc'), 0);
  add('nyc', 1);
  assert.equal(reader.latestSeq('nyc'), 1);
  add('nyc', 2);
  add('paris', 1);
  assert.equal(reader.latestSeq('nyc'), 2);
  assert.equal(reader.latestSeq('paris'), 1);
  assert.equal(reader.latestSeq('tokyo'), 0);
});

test('page bytes are the stored JSON of (since, end] followed by the tail, built once per range', (t) => {
  const { add, reader } = setup(t);
  for (let s = 1; s <= 5; s++) add('nyc', s);
  const tail = (last: number) => `,"next_cursor":${last}}`;
  const body = reader.pageBytes('nyc', { since: 1, end: 4, tail });
  assert.deepEqual(JSON.parse(body.toString()), {
    signals: [2, 3, 4].map((seq) => ({ city: 'nyc', seq })),
    next_cursor: 4,
  });
  assert.equal(reader.pageBytes('nyc', { since: 1, end: 4, tail }), body, 'the same tail reuses the same bytes');
  const other = reader.pageBytes('nyc', { since: 1, end: 4, tail: (last) => `,"next_cursor":${last},"more":true}` });
  assert.deepEqual(
    JSON.parse(other.toString()).signals.map((s: { seq: number }) => s.seq),
    [2, 3, 4],
  );
  assert.deepEqual(
    JSON.parse(reader.pageBytes('nyc', { since: 5, end: 5, tail }).toString()),
    { signals: [], next_cursor: 5 },
    'an empty page keeps the cursor',
  );
});
