import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openDb } from '../../src/db/open.ts';
import { prepareOnFirstUse } from '../../src/db/open.ts';
import { tempDir } from '../helpers/app.ts';

function database(t: { after(fn: () => void): void }) {
  const db = openDb(join(tempDir(t, 'isocast-lazy-'), 'a.db'), { migrate: false });
  t.after(() => db.close());
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT NOT NULL)');
  return db;
}

test('a statement handed out before end() is prepared at its first call and behaves as one prepared at once', (t) => {
  const db = database(t);
  const lazy = prepareOnFirstUse(db);
  const insert = db.prepare('INSERT INTO t (name) VALUES (?)');
  const names = db.prepare('SELECT name FROM t ORDER BY id').pluck();
  const count = db.prepare('SELECT count(*) AS n FROM t');
  const broken = db.prepare('SELEKT nothing');
  lazy.end();
  assert.equal(insert.run('a').changes, 1);
  assert.equal(insert.run('b').lastInsertRowid, 2);
  assert.deepEqual(names.all(), ['a', 'b']);
  assert.deepEqual(count.get(), { n: 2 });
  assert.equal(count.reader, true);
  assert.equal(insert.reader, false);
  assert.deepEqual(count.pluck().get(), 2);
  // The SQL error comes at the first call, with SQLite's own message.
  assert.throws(() => broken.get(), /syntax error/);
  // After end() the connection prepares as usual again.
  assert.throws(() => db.prepare('SELEKT nothing'), /syntax error/);
});

test('warm() prepares what no call has yet, and fails on SQL that does not prepare', async (t) => {
  const db = database(t);
  const lazy = prepareOnFirstUse(db, 2);
  const statements = Array.from({ length: 5 }, (_, i) => db.prepare(`SELECT ${i} AS n`));
  lazy.end();
  await lazy.warm();
  assert.deepEqual(
    statements.map((s) => s.get()),
    [0, 1, 2, 3, 4].map((n) => ({ n })),
  );
  const again = prepareOnFirstUse(db);
  db.prepare('SELECT name FROM missing_table');
  again.end();
  await assert.rejects(again.warm(), /no such table/);
});
