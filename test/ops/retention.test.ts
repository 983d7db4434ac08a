import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openDb, type Db } from '../../src/db/open.ts';
import { createOutbox } from '../../src/delivery/outbox.ts';
import { manualClock } from '../helpers/clock.ts';
import { memoryLogger } from '../helpers/logger.ts';
import { createMetrics } from '../../src/lib/metrics.ts';
import { createRetention } from '../../src/ops/retention.ts';
import { tempDir } from '../helpers/app.ts';
import { emptyScreen } from '../delivery/fixtures.ts';
import { createStores } from '../../src/stores.ts';

const DAY = 86_400_000;
const NOW = Date.parse('2026-07-15T12:00:00Z');
const wallet = (i: number) => '0x' + i.toString(16).padStart(40, '0');

function seed(db: Db) {
  const sig = db.prepare(
    `INSERT INTO signals (city, seq, target_date, new_bucket, observed_at, payload, created_at) VALUES (?, ?, ?, ?, '', '{}', 0)`,
  );
  for (let seq = 1; seq <= 5; seq++) sig.run('nyc', seq, '2026-07-01', `b${seq}`);
  const pay =
    db.prepare(`INSERT INTO payments (id, payer, nonce, city, count, amount_micro, settler, status, created_at, updated_at)
    VALUES (?, ?, ?, 'nyc', 2, 1000, 'mock', ?, ?, ?)`);
  const statuses = ['claimed', 'settled', 'applied', 'failed', 'refund_queued'];
  let id = 1;
  // Every status, old and recent: only old 'failed' rows may go.
  for (const status of statuses) {
    for (const age of [400, 31, 1]) {
      pay.run(id, wallet(id), `0x${id}`, status, NOW - age * DAY, NOW - age * DAY);
      id++;
    }
  }
  const out =
    db.prepare(`INSERT INTO delivery_outbox (wallet, city, target_date, bucket, seq, status, next_attempt_at, created_at, updated_at)
    VALUES (?, 'nyc', '2026-07-01', ?, 1, ?, 0, ?, ?)`);
  let n = 0;
  for (const status of ['queued', 'sending', 'sent', 'failed']) {
    for (const age of [90, 31, 29, 1])
      for (let k = 0; k < 5; k++) out.run(wallet(1000 + n), `b${n++}`, status, NOW - age * DAY, NOW - age * DAY);
  }
  // Receipts: wallet 1 is owed signal 6 (paid through 10 > latest 5); wallet 2 is not.
  db.prepare(`INSERT INTO entitlements VALUES (?, 'nyc', 10, 10, 0), (?, 'nyc', 5, 5, 0)`).run(wallet(1), wallet(2));
  const rec = db.prepare(
    `INSERT INTO receipts (selector, verifier_hash, wallet, payment_id, created_at) VALUES (?, x'00', ?, 3, ?)`,
  );
  rec.run('owed-old', wallet(1), NOW - 400 * DAY);
  rec.run('done-old', wallet(2), NOW - 400 * DAY);
  rec.run('done-new', wallet(2), NOW - 10 * DAY);
  rec.run('nothing-old', wallet(3), NOW - 400 * DAY);
}

const counts = (db: Db) =>
  Object.fromEntries(
    (db.prepare('SELECT name, n FROM row_counts').all() as { name: string; n: number }[]).map((r) => [r.name, r.n]),
  );
const statusCounts = (db: Db, table: string) =>
  Object.fromEntries(
    (
      db.prepare(`SELECT status, count(*) AS n FROM ${table} GROUP BY status`).all() as { status: string; n: number }[]
    ).map((r) => [r.status, r.n]),
  );

test('prune removes only old finished outbox rows, old failed payments and old receipts owed nothing', async (t) => {
  const db = openDb(join(tempDir(t), 'isocast.db'));
  t.after(() => db.close());
  seed(db);
  const logger = memoryLogger();
  const metrics = createMetrics();
  const r = createRetention({
    db,
    clock: manualClock(NOW),
    logger,
    metrics,
    batch: 3,
    settings: { outboxDays: 30, failedPaymentDays: 30, receiptDays: 365 },
  });
  const report = await r.runOnce();
  // 2 ages x 5 rows x {sent, failed} are older than 30 days.
  assert.equal(report.outbox, 20);
  assert.equal(report.failedPayments, 2);
  assert.equal(report.receipts, 2);
  assert.ok(report.batches > 8, 'small batches, each its own transaction');

  assert.deepEqual(statusCounts(db, 'delivery_outbox'), { queued: 20, sending: 20, sent: 10, failed: 10 });
  assert.deepEqual(statusCounts(db, 'payments'), { claimed: 3, settled: 3, applied: 3, failed: 1, refund_queued: 3 });
  assert.deepEqual(db.prepare('SELECT selector FROM receipts ORDER BY selector').pluck().all(), [
    'done-new',
    'owed-old',
  ]);
  // The trigger-kept counters follow the deletes.
  assert.deepEqual(
    createOutbox(db, { clock: manualClock(NOW), screen: emptyScreen(), reader: createStores(db).reader }).counts(),
    {
      queued: 20,
      sending: 20,
      sent: 10,
      failed: 10,
    },
  );
  assert.equal(counts(db)['payments:applied'], 3);

  const done = logger.lines.map((l) => JSON.parse(l)).find((l) => l.msg === 'retention prune done');
  assert.equal(done.outbox, 20);
  assert.ok(logger.lines.some((l) => JSON.parse(l).msg === 'database optimized'));
  assert.match(metrics.render(), /isocast_retention_pruned_rows_total\{table="delivery_outbox"\} 20/);

  // A second run finds nothing; 0 days keeps everything.
  assert.deepEqual(
    { ...(await r.runOnce()), ms: 0, batches: 0, maxBatchMs: 0 },
    { outbox: 0, failedPayments: 0, receipts: 0, siwxNonces: 0, batches: 0, maxBatchMs: 0, ms: 0 },
  );
  const keep = createRetention({
    db,
    clock: manualClock(NOW + 10_000 * DAY),
    logger,
    settings: { outboxDays: 0, failedPaymentDays: 0, receiptDays: 0 },
  });
  assert.equal((await keep.runOnce()).outbox, 0);
  assert.equal(db.prepare('SELECT count(*) FROM delivery_outbox').pluck().get(), 60);
});

test('a large backlog is pruned in batches that give the event loop back', async (t) => {
  const db = openDb(join(tempDir(t), 'isocast.db'));
  t.after(() => db.close());
  const out =
    db.prepare(`INSERT INTO delivery_outbox (wallet, city, target_date, bucket, seq, status, next_attempt_at, created_at, updated_at)
    VALUES (?, 'nyc', '2026-07-01', 'b', 1, 'sent', 0, 0, 0)`);
  db.transaction(() => {
    for (let i = 0; i < 20_000; i++) out.run(wallet(i));
  })();
  const r = createRetention({
    db,
    clock: manualClock(NOW),
    logger: memoryLogger(),
    settings: { outboxDays: 30, failedPaymentDays: 30, receiptDays: 365 },
  });
  let ticks = 0;
  const timer = setInterval(() => {
    ticks++;
  }, 0);
  const report = await r.runOnce();
  clearInterval(timer);
  assert.equal(report.outbox, 20_000);
  assert.ok(report.batches >= 20_000 / 5_000 + 3, `${report.batches} batches`);
  assert.ok(ticks >= 3, `timers ran between batches (${ticks})`);
  assert.equal(counts(db)['outbox:sent'], 0);
});

test('the counters match the tables after inserts, updates, upserts and deletes', (t) => {
  const db = openDb(join(tempDir(t), 'isocast.db'));
  t.after(() => db.close());
  seed(db);
  db.prepare(`UPDATE payments SET status = 'applied' WHERE id = 1`).run();
  db.prepare(`UPDATE payments SET status = 'refund_queued' WHERE id = 7`).run();
  db.prepare(
    `INSERT INTO entitlements VALUES (?, 'nyc', 3, 3, 0) ON CONFLICT (wallet, city) DO UPDATE SET paid_through_seq = 12`,
  ).run(wallet(1));
  db.prepare(`DELETE FROM delivery_outbox WHERE status = 'queued' AND bucket IN ('b0', 'b1')`).run();
  db.prepare(`UPDATE delivery_outbox SET status = 'sent' WHERE status = 'sending'`).run();
  const c = counts(db);
  const applied = db
    .prepare(`SELECT count(*) AS n, sum(amount_micro) AS micro FROM payments WHERE status = 'applied'`)
    .get() as { n: number; micro: number };
  assert.equal(c['payments:applied'], applied.n);
  assert.equal(db.prepare(`SELECT micro FROM row_counts WHERE name = 'payments:applied'`).pluck().get(), applied.micro);
  assert.equal(c.entitlements, db.prepare('SELECT count(*) FROM entitlements').pluck().get());
  const byStatus = statusCounts(db, 'delivery_outbox');
  for (const s of ['queued', 'sending', 'sent', 'failed']) assert.equal(c[`outbox:${s}`], byStatus[s] ?? 0, s);
});
