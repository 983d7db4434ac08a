import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { openDb } from '../../src/db/open.ts';
import { createStores } from '../../src/stores.ts';
import { createCatalog } from '../../src/cities/catalog.ts';
import { tempDir } from '../helpers/app.ts';
import { crossings } from '../helpers/crossings.ts';

const SRC = join(import.meta.dirname, '../../src');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** Issue 30.5: each table's store is built once, in src/stores.ts, and passed down. */
test('the stores are built only in src/stores.ts; no per-connection memo or (db, ...) forms remain', () => {
  const factories =
    /\bcreate(SignalReader|SignalStore|SignalNotifier|EntitlementStore|ReceiptStore|RuleStore|DiscoveryStore)\(/g;
  // The doctor runs on its own read-only connection and builds the two stores it reads once per run.
  const allowed = new Set(['stores.ts', 'resolution/store.ts']);
  const found: string[] = [];
  for (const file of sources(SRC)) {
    const rel = relative(SRC, file);
    const text = readFileSync(file, 'utf8').replace(/export function create\w+\(/g, '');
    for (const m of text.matchAll(factories)) if (!allowed.has(rel)) found.push(`${rel}: ${m[0]}`);
  }
  assert.deepEqual(found, []);
  assert.equal(existsSync(join(SRC, 'lib/per-connection.ts')), false);
});

test('one set of stores: a commit through the signal store reaches the reader memo and the notifier at once', async (t) => {
  const db = openDb(join(tempDir(t), 'isocast.db'));
  t.after(() => db.close());
  const stores = createStores(db);
  const nyc = createCatalog().get('nyc')!;
  const feed = crossings(stores.signals, nyc, Date.parse('2026-07-15T15:00:00Z'));
  // Remembered (LATEST_MEMO_MS is 1 s), then a commit on the same connection must show at once.
  assert.equal(stores.reader.latestSeq('nyc'), 0);
  const woken = stores.notifier.wait('nyc', 0, { ms: 5_000 });
  feed.next();
  assert.equal(stores.reader.latestSeq('nyc'), 1);
  assert.equal(await woken, 'signal');
  assert.equal(stores.entitlements.applyPurchase({ wallet: '0xAB', city: 'nyc', count: 2, nowMs: 1 }).latestSeq, 1);
  stores.notifier.releaseAll();
});
