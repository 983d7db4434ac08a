import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { startCheckpointer } from '../../src/db/checkpointer.ts';
import { openDb, type Db } from '../../src/db/open.ts';
import { memoryLogger } from '../helpers/logger.ts';
import { createMetrics } from '../../src/lib/metrics.ts';

const autocheckpoint = (db: Db) => db.pragma('wal_autocheckpoint', { simple: true }) as number;

async function until(what: string, ok: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function scratch(t: { after(fn: () => void): void }): { db: Db; path: string } {
  const dir = mkdtempSync(join(tmpdir(), 'isocast-ckpt-'));
  const path = join(dir, 'isocast.db');
  const db = openDb(path);
  t.after(() => {
    if (db.open) db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  db.exec('CREATE TABLE filler (id INTEGER PRIMARY KEY, blob BLOB)');
  return { db, path };
}

test('a background thread checkpoints the WAL; the main connection only keeps a safety net', async (t) => {
  const { db, path } = scratch(t);
  const metrics = createMetrics();
  const logger = memoryLogger();
  const ckpt = startCheckpointer({ db, path, logger, metrics });
  await until('the thread to be ready', () => ckpt.running());
  assert.equal(autocheckpoint(db), 16_384, 'the main connection checkpoints only past 64 MiB of WAL');

  // 3,000 commits of a page each: far past SQLite's default 1,000-page automatic checkpoint.
  const insert = db.prepare('INSERT INTO filler (blob) VALUES (randomblob(3000))');
  for (let i = 0; i < 3000; i++) insert.run();
  await until('a checkpoint from the thread', () => /isocast_sqlite_checkpoints_total \d+/.test(metrics.render()));
  // Everything committed so far reaches the database file without the main connection copying it.
  await until('the WAL to be fully copied', () => {
    const [r] = db.pragma('wal_checkpoint(NOOP)') as { log: number; checkpointed: number }[];
    return r !== undefined && r.log > 0 && r.checkpointed === r.log;
  }).catch(async () => {
    // NOOP is newer than some SQLite builds: fall back to the file size, which grows as pages land.
    await until('the database file to grow', () => statSync(path).size > 3000 * 3000);
  });
  assert.ok(statSync(path).size > 3000 * 3000, 'the rows are in the database file');
  assert.match(metrics.render(), /isocast_sqlite_wal_frames \d+/);

  await ckpt.stop();
  assert.equal(ckpt.running(), false);
  assert.equal(autocheckpoint(db), 1000, 'the default comes back once the thread is stopped');
  assert.ok(!logger.lines.some((l) => l.includes('"level":"warn"')), logger.lines.join('\n'));
});

test('a thread that cannot open the database leaves checkpoints to the main connection, with a warning', async (t) => {
  const { db } = scratch(t);
  const logger = memoryLogger();
  const ckpt = startCheckpointer({ db, path: join(tmpdir(), 'no-such-dir-isocast', 'x.db'), logger });
  await until('the warning', () => logger.lines.some((l) => l.includes('checkpoint thread stopped')));
  assert.equal(ckpt.running(), false);
  assert.equal(autocheckpoint(db), 1000);
  assert.ok(logger.lines.some((l) => l.includes('cannot open the database')));
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(logger.lines.filter((l) => l.includes('checkpoint thread stopped')).length, 1, 'one warning');
  await ckpt.stop();
});

test('stop before the delayed start never starts a thread', async (t) => {
  const { db, path } = scratch(t);
  const ckpt = startCheckpointer({ db, path, logger: memoryLogger(), startDelayMs: 60_000 });
  await ckpt.stop();
  assert.equal(ckpt.running(), false);
  assert.equal(autocheckpoint(db), 1000);
});
