import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { createAdminReport } from '../../src/admin/report.ts';
import { createCatalog } from '../../src/cities/catalog.ts';
import { openDb } from '../../src/db/open.ts';
import { createOutbox } from '../../src/delivery/outbox.ts';
import { manualClock } from '../helpers/clock.ts';
import { memoryLogger } from '../helpers/logger.ts';
import { createRetention } from '../../src/ops/retention.ts';
import { buildGrowthDb } from '../../scripts/bench/growth.ts';
import { tempDir } from '../helpers/app.ts';
import { emptyScreen } from '../delivery/fixtures.ts';
import { createStores } from '../../src/stores.ts';

/**
 * The growth bench's database at a twentieth of its size (the full size runs only in
 * `npm run bench -- --only growth`): the counters the operator page and /metrics read agree with
 * the tables, and after the start-up maintenance a signal enqueue finds its wallets through the
 * (city, paid_through_seq) index instead of reading every registration or entitlement.
 */
test('growth database, small: counters agree with the tables; the enqueue uses the entitlement index', async (t) => {
  const path = join(tempDir(t), 'isocast.db');
  const nowMs = Date.now();
  const { latest } = buildGrowthDb(
    path,
    { signals: 50_000, outbox: 100_000, entitlements: 10_000, registrations: 1_000 },
    nowMs,
    () => {},
  );
  const db = openDb(path);
  t.after(() => db.close());
  const retention = createRetention({
    db,
    clock: manualClock(nowMs),
    logger: memoryLogger(),
    settings: { outboxDays: 30, failedPaymentDays: 30, receiptDays: 365 },
  });
  const pruned = await retention.runOnce();
  assert.ok(pruned.failedPayments > 0 && pruned.outbox === 0 && pruned.receipts === 0, JSON.stringify(pruned));

  const report = createAdminReport({
    db,
    stores: createStores(db),
    catalog: createCatalog(),
    paymentMode: 'mock',
    feed: 'sim',
  })(nowMs);
  const one = (sql: string) => db.prepare(sql).pluck().get() as number;
  assert.equal(report.totals.signals, one('SELECT count(*) FROM signals'));
  assert.equal(report.totals.entitlements, one('SELECT count(*) FROM entitlements'));
  assert.equal(report.totals.appliedPayments, one(`SELECT count(*) FROM payments WHERE status = 'applied'`));
  assert.equal(report.totals.revenueMicro, one(`SELECT sum(amount_micro) FROM payments WHERE status = 'applied'`));
  const counts = createOutbox(db, {
    clock: manualClock(nowMs),
    screen: emptyScreen(),
    reader: createStores(db).reader,
  }).counts();
  assert.deepEqual(report.deliveries.counts, counts);
  assert.equal(counts.sent + counts.failed, one('SELECT count(*) FROM delivery_outbox'));
  assert.equal(counts.failed, one(`SELECT count(*) FROM delivery_outbox WHERE status = 'failed'`));
  for (const c of report.poller.cities) assert.equal(c.latestSeq, latest.get(c.city) ?? 0, c.city);

  const plan = (
    db
      .prepare(`EXPLAIN QUERY PLAN SELECT r.wallet FROM delivery_registrations r
    JOIN entitlements e ON e.wallet = r.wallet AND e.city = @city
    WHERE (r.city IS NULL OR r.city = @city) AND e.paid_through_seq >= @seq`)
      .all({ city: 'nyc', seq: 1 }) as { detail: string }[]
  ).map((r) => r.detail);
  assert.ok(
    plan.some((d) => /entitlements_city_paid/.test(d)),
    plan.join(' | '),
  );
});
