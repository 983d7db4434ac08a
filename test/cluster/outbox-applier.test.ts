import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openDb } from '../../src/db/open.ts';
import { migrate } from '../../src/db/migrate.ts';
import { createStores } from '../../src/stores.ts';
import { createApplier, createReplicationOutbox, subjectOf, type StreamMessage } from '../../src/cluster/tables.ts';
import { insertSignals } from '../helpers/signals.ts';
import { tempDir } from '../helpers/app.ts';

/**
 * The copy without NATS: what the 0020 triggers queue on a primary, read as changes and applied
 * to a reader's file in stream order, leaves the reader's replicated tables identical to the
 * primary's, through inserts, updates, deletes (a revocation) and the first start's seed; a
 * batch applied again changes nothing, and a woken long poll sees the new signal.
 */
const WALLET = '0x' + 'ab'.repeat(20);

function node(dir: string, name: string) {
  const db = openDb(join(dir, `${name}.db`));
  migrate(db);
  return { db, stores: createStores(db) };
}
const rows = (db: ReturnType<typeof openDb>) => ({
  signals: db.prepare('SELECT * FROM signals ORDER BY city, seq').all(),
  entitlements: db.prepare('SELECT * FROM entitlements ORDER BY wallet, city').all(),
  receipts: db.prepare('SELECT * FROM receipts ORDER BY selector').all(),
  counted: db.prepare(`SELECT n FROM row_counts WHERE name = 'entitlements'`).pluck().get(),
});

test('outbox changes applied in order make an identical copy, idempotently', async (t) => {
  const dir = tempDir(t);
  const primary = node(dir, 'primary');
  const reader = node(dir, 'reader');
  reader.db.pragma('foreign_keys = OFF');
  // Rows from before NATS was configured: the first start seeds them.
  insertSignals(primary.db, 'london', 2);
  const outbox = createReplicationOutbox(primary.db);
  assert.equal(primary.db.prepare('SELECT recording FROM replication_state').pluck().get(), 0);
  outbox.startRecording();
  assert.equal(outbox.backlog(), 2);
  insertSignals(primary.db, 'nyc', 3);
  primary.db.transaction(() => {
    primary.stores.entitlements.applyPurchase({ wallet: WALLET, city: 'nyc', count: 5, nowMs: 1 });
    primary.stores.entitlements.applyPurchase({ wallet: WALLET, city: 'nyc', count: 5, nowMs: 2 });
  })();
  primary.db
    .prepare(`INSERT INTO payments (id, payer, nonce, city, count, amount_micro, settler, status, created_at, updated_at)
      VALUES (1, ?, '0x01', 'nyc', 5, 1000, 'mock', 'applied', 3, 3)`)
    .run(WALLET);
  const token = primary.stores.receipts.issue(WALLET, 1, 3);
  const woken: string[] = [];
  const applier = createApplier(reader.db, { committed: (city, seq) => woken.push(`${city}:${seq}`) });
  let seq = 0;
  const ship = () => {
    const batch = outbox.next(1000);
    const msgs: StreamMessage[] = batch.map((p) => ({ seq: ++seq, change: JSON.parse(JSON.stringify(p.change)) }));
    applier.apply(msgs);
    if (batch.length) outbox.published(batch[batch.length - 1]!.id);
    return msgs;
  };
  const first = ship();
  assert.deepEqual(rows(reader.db), rows(primary.db));
  assert.equal(reader.stores.receipts.walletFor(token), WALLET);
  assert.ok(woken.includes('nyc:3'));
  assert.equal(applier.appliedSeq(), seq);
  assert.equal(outbox.backlog(), 0);
  // At least once: the same messages again change nothing.
  applier.apply(first);
  assert.deepEqual(rows(reader.db), rows(primary.db));
  // A revocation deletes the token on the copy too.
  primary.stores.receipts.revokeAll(WALLET);
  ship();
  assert.equal(reader.stores.receipts.walletFor(token), null);
  assert.deepEqual(rows(reader.db), rows(primary.db));
  // A reader's own file records nothing for anyone (its triggers are off).
  assert.equal(createReplicationOutbox(reader.db).backlog(), 0);
});

test('each row has its own subject; odd key parts are escaped', () => {
  assert.equal(subjectOf('signals', ['nyc', 3]), 'isocast.rep.signals.nyc.3');
  assert.equal(subjectOf('receipts', ['a.b c']), `isocast.rep.receipts.~${Buffer.from('a.b c').toString('hex')}`);
});
