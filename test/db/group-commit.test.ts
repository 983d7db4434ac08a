import { test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createGroupCommit } from '../../src/db/group-commit.ts';
import { openDb } from '../../src/db/open.ts';

/** A WAL database file with a table to write, a second connection to look from, and a commit log. */
function setup(t: { after(fn: () => void): void }) {
  const dir = mkdtempSync(join(tmpdir(), 'isocast-group-commit-'));
  const path = join(dir, 'g.db');
  const db = openDb(path, { migrate: false });
  db.exec(`CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER NOT NULL);
    CREATE TABLE parent (id INTEGER PRIMARY KEY);
    CREATE TABLE child (id INTEGER PRIMARY KEY, parent INTEGER REFERENCES parent (id) DEFERRABLE INITIALLY DEFERRED);`);
  const other = new Database(path, { readonly: true });
  t.after(() => {
    other.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const commits: number[] = [];
  const gc = createGroupCommit(db, { onCommit: (n) => commits.push(n) });
  const insert = db.prepare('INSERT INTO t (k, v) VALUES (?, ?)');
  const seen = () => other.prepare('SELECT k, v FROM t ORDER BY k').all() as { k: string; v: number }[];
  return { db, gc, commits, insert, seen };
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: Error };
const settled = (p: Promise<unknown>): Promise<Outcome> =>
  p.then(
    (value) => ({ ok: true as const, value }),
    (error: Error) => ({ ok: false as const, error }),
  );
/** The outcomes of units queued together, in order. */
const outcomes = (ps: Promise<unknown>[]) => Promise.all(ps.map(settled));
const errorOf = (o: Outcome | undefined): string => (o && !o.ok ? o.error.message : 'no error');

test('units queued in one turn commit together, in order, and resolve only once committed', async (t) => {
  const { gc, commits, insert, seen, db } = setup(t);
  const runs = ['a', 'b', 'c', 'd'].map((k, i) =>
    gc.run(() => {
      insert.run(k, i);
      // Each unit sees the ones queued before it, as sequential transactions would.
      return (db.prepare('SELECT count(*) FROM t').pluck().get() as number) - 1;
    }),
  );
  // Nothing is written before the end of the turn.
  assert.deepEqual(seen(), []);
  assert.deepEqual(await Promise.all(runs), [0, 1, 2, 3]);
  assert.deepEqual(commits, [4]);
  assert.equal(seen().length, 4, 'visible to another connection when the promises resolve');
  assert.equal(db.inTransaction, false);
});

test('a unit that throws rejects alone, leaves nothing behind, and the others still commit', async (t) => {
  const { gc, commits, insert, seen } = setup(t);
  const ok1 = gc.run(() => insert.run('a', 1).changes);
  const bad = gc.run(() => {
    insert.run('half-written', 0);
    throw new Error('unit failed');
  });
  const dup = gc.run(() => insert.run('a', 2).changes); // a constraint error on the batch's own earlier row
  const ok2 = gc.run(() => insert.run('b', 3).changes);
  const [r1, rBad, rDup, r2] = await outcomes([ok1, bad, dup, ok2]);
  assert.deepEqual(r1, { ok: true, value: 1 });
  assert.deepEqual(r2, { ok: true, value: 1 });
  assert.equal(errorOf(rBad), 'unit failed');
  assert.match(errorOf(rDup), /UNIQUE constraint failed/);
  assert.deepEqual(seen(), [
    { k: 'a', v: 1 },
    { k: 'b', v: 3 },
  ]);
  // The batch was rolled back and every unit ran alone: two commits, one per unit that succeeded.
  assert.deepEqual(commits, [1, 1]);
});

test('a COMMIT that fails (a deferred foreign key) is retried unit by unit: only the culprit fails', async (t) => {
  const { gc, commits, db, seen, insert } = setup(t);
  const a = gc.run(() => insert.run('a', 1).changes);
  // The statement succeeds; the deferred constraint only fails at COMMIT.
  const orphan = gc.run(() => db.prepare('INSERT INTO child (id, parent) VALUES (1, 99)').run().changes);
  const b = gc.run(() => insert.run('b', 2).changes);
  const [ra, ro, rb] = await outcomes([a, orphan, b]);
  assert.deepEqual(ra, { ok: true, value: 1 });
  assert.deepEqual(rb, { ok: true, value: 1 });
  assert.match(errorOf(ro), /FOREIGN KEY constraint failed/);
  assert.equal(seen().length, 2);
  assert.equal(db.prepare('SELECT count(*) FROM child').pluck().get(), 0);
  assert.deepEqual(commits, [1, 1]);
  assert.equal(db.inTransaction, false);
});

test('a unit that returns a promise is refused; the rest of its batch commits', async (t) => {
  const { gc, insert, seen } = setup(t);
  const asyncUnit = gc.run((async () => undefined) as () => unknown);
  const ok = gc.run(() => insert.run('a', 1).changes);
  await assert.rejects(asyncUnit, /must be synchronous/);
  assert.equal(await ok, 1);
  assert.equal(seen().length, 1);
});

test('a large queue is split into commits of at most 64 units', async (t) => {
  const { gc, commits, insert, seen } = setup(t);
  await Promise.all(Array.from({ length: 130 }, (_, i) => gc.run(() => insert.run(`k${i}`, i))));
  assert.deepEqual(commits, [64, 64, 2]);
  assert.equal(seen().length, 130);
});

test("a transaction left open across a turn is waited for, never committed on its holder's behalf", async (t) => {
  const { gc, db, insert, seen } = setup(t);
  db.exec('BEGIN');
  insert.run('theirs', 0);
  let done = false;
  const mine = gc
    .run(() => insert.run('mine', 1).changes)
    .then((v) => {
      done = true;
      return v;
    });
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(done, false, 'the unit waits while another transaction is open');
  db.exec('ROLLBACK');
  assert.equal(await mine, 1);
  assert.deepEqual(seen(), [{ k: 'mine', v: 1 }]);
});

test("a unit queued from a resolved unit's continuation runs in the next commit", async (t) => {
  const { gc, commits, insert } = setup(t);
  await gc.run(() => insert.run('a', 1));
  await gc.run(() => insert.run('b', 2));
  assert.deepEqual(commits, [1, 1]);
});
