import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import fc from 'fast-check';
import { openDb, type Db } from '../../src/db/open.ts';
import type { SignalStore } from '../../src/signals/store.ts';
import type { MarketBucketRef, OddsSample } from '../../src/sources/market/types.ts';
import { signalSchema } from '../../src/signals/schemas.ts';
import { bucketFor } from '../../src/buckets/labels.ts';
import { tempDir } from '../helpers/app.ts';
import { ladderF } from '../buckets/ladder.ts';
import { createStores } from '../../src/stores.ts';

type StoreSignalInput = Parameters<SignalStore['storeSignal']>[0];

const T0 = Date.parse('2026-07-15T15:00:00Z');
const BUCKETS: MarketBucketRef[] = ladderF(70).map((b, i) => ({
  ...b,
  conditionId: '0x' + (i + 1).toString(16).padStart(64, '0'),
}));
const ODDS: OddsSample = {
  asOfMs: T0 + 700,
  byLabel: new Map(BUCKETS.map((b) => [b.label, { yes: 0.12, no: 0.89, midpoint: 0.115 }])),
};
const NYC = { slug: 'nyc', displayName: 'NYC', unit: 'F' as const };

function input(reading: number, over: Partial<StoreSignalInput> = {}): StoreSignalInput {
  return {
    city: NYC,
    targetDate: '2026-07-15',
    reading,
    buckets: BUCKETS,
    nowMs: T0 + 800,
    marketUrl: 'https://polymarket.com/event/highest-temperature-in-nyc-on-july-15-2026',
    conditionId: '0x' + 'ab'.repeat(32),
    odds: ODDS,
    source: 'wu',
    observedAtMs: T0,
    ...over,
  };
}

function db(t: { after(fn: () => void): void }): { db: Db; path: string } {
  const path = join(tempDir(t), 'isocast.db');
  const d = openDb(path);
  t.after(() => {
    if (d.open) d.close();
  });
  return { db: d, path };
}

/** nyc's newest day_state row as the operator page reads it. */
function dayState(d: Db) {
  const { targetDate, high, bucket } = createStores(d).signals.latestReadings().get('nyc')!;
  return { targetDate, high, bucket };
}

/** What the poller does with one reading: record it, and store a signal when it crosses. */
function feed(d: Db, reading: number, over: Partial<StoreSignalInput> = {}) {
  const det = createStores(d).signals.saveReading(input(reading, over));
  return det.crossing ? createStores(d).signals.storeSignal(input(reading, over)) : null;
}

test('baseline is stored without a signal; a crossing stores the canonical signal with seq 1', (t) => {
  const { db: d } = db(t);
  assert.equal(feed(d, 73), null);
  assert.deepEqual(dayState(d), { targetDate: '2026-07-15', high: 73, bucket: '72-73°F' });
  const s = feed(d, 75)!;
  assert.deepEqual(signalSchema().parse(s), s);
  assert.equal(s.seq, 1);
  assert.deepEqual(s.old, { reading: 73, unit: 'F', bucket: '72-73°F' });
  assert.deepEqual(s.new, { reading: 75, unit: 'F', bucket: '74-75°F' });
  assert.equal(s.observedAt, new Date(T0).toISOString());
  assert.equal(s.bucketsAsOf, new Date(T0 + 700).toISOString());
  assert.equal(s.conditionId, '0x' + 'ab'.repeat(32));
  assert.equal(s.buckets!.length, BUCKETS.length);
  // Dead exactly for buckets wholly below 75, and the key is absent otherwise.
  assert.deepEqual(
    s.buckets!.filter((b) => b.dead).map((b) => b.label),
    ['69°F or below', '70-71°F', '72-73°F'],
  );
  assert.ok(s.buckets!.filter((b) => !b.dead).every((b) => !('dead' in b)));
  const row = d
    .prepare('SELECT payload, new_bucket, observed_at FROM signals WHERE city = ? AND seq = 1')
    .get('nyc') as { payload: string; new_bucket: string; observed_at: string };
  assert.equal(row.payload, JSON.stringify(s));
  assert.equal(row.new_bucket, '74-75°F');
});

test('repeated storeSignal, duplicate observations and a restart never re-emit', (t) => {
  const { db: d, path } = db(t);
  feed(d, 71);
  assert.equal(feed(d, 72)!.seq, 1);
  assert.equal(createStores(d).signals.storeSignal(input(72)), null);
  assert.equal(feed(d, 72), null);
  assert.equal(feed(d, 71), null);
  d.close();
  const again = openDb(path);
  t.after(() => {
    if (again.open) again.close();
  });
  assert.equal(feed(again, 72), null);
  assert.equal(createStores(again).signals.storeSignal(input(72)), null);
  assert.equal(feed(again, 74)!.seq, 2);
  assert.equal(again.prepare('SELECT count(*) FROM signals').pluck().get(), 2);
});

test('seq is per city and gapless; other cities and days are independent', (t) => {
  const { db: d } = db(t);
  feed(d, 71);
  feed(d, 72);
  feed(d, 74);
  const la = { city: { slug: 'los-angeles', displayName: 'Los Angeles', unit: 'F' as const } };
  feed(d, 71, la);
  assert.equal(feed(d, 73, la)!.seq, 1);
  const nextDay = { targetDate: '2026-07-16' };
  feed(d, 70, nextDay);
  assert.equal(feed(d, 72, nextDay)!.seq, 3);
  assert.deepEqual(d.prepare("SELECT seq FROM signals WHERE city = 'nyc' ORDER BY seq").pluck().all(), [1, 2, 3]);
});

test('the inTransaction hook runs inside the transaction, and a throwing hook stores nothing', (t) => {
  const { db: d } = db(t);
  feed(d, 71);
  assert.throws(
    () =>
      createStores(d).signals.storeSignal(input(72), {
        inTransaction: () => {
          throw new Error('outbox full');
        },
      }),
    /outbox full/,
  );
  assert.equal(d.prepare('SELECT count(*) FROM signals').pluck().get(), 0);
  assert.deepEqual(dayState(d), { targetDate: '2026-07-15', high: 71, bucket: '70-71°F' });
  let seen: { seq: number; inTx: boolean } | null = null;
  const s = createStores(d).signals.storeSignal(input(72), {
    inTransaction: (sig) => {
      seen = { seq: sig.seq, inTx: d.inTransaction };
    },
  });
  assert.deepEqual(seen, { seq: 1, inTx: true });
  assert.equal(s!.seq, 1);
});

test('odds that could not be sampled give buckets and bucketsAsOf null; null conditionId falls back to the entered bucket', (t) => {
  const { db: d } = db(t);
  feed(d, 71);
  const s = feed(d, 76, { odds: null, conditionId: null })!;
  assert.equal(s.buckets, null);
  assert.equal(s.bucketsAsOf, null);
  assert.equal(s.conditionId, BUCKETS.find((b) => b.label === '76-77°F')!.conditionId);
});

test('a lost day state cannot re-emit a bucket already entered that day (unique city, day, bucket)', (t) => {
  const { db: d } = db(t);
  feed(d, 71);
  feed(d, 72);
  d.prepare("UPDATE day_state SET high = 71, bucket = '70-71°F'").run();
  assert.equal(createStores(d).signals.storeSignal(input(72)), null);
  assert.deepEqual(dayState(d), { targetDate: '2026-07-15', high: 72, bucket: '72-73°F' });
});

test('property: any reading sequence, with a restart anywhere and replayed readings, gives exactly the bucket entries after the baseline, seq gapless from 1', (t) => {
  const dir = tempDir(t);
  let run = 0;
  fc.assert(
    fc.property(
      fc.array(fc.integer({ min: 60, max: 95 }), { minLength: 1, maxLength: 40 }),
      fc.nat(),
      (readings, cut) => {
        const path = join(dir, `p${run++}.db`);
        let d = openDb(path);
        const split = cut % (readings.length + 1);
        const got: { seq: number; bucket: string }[] = [];
        for (const r of readings.slice(0, split)) {
          const s = feed(d, r);
          if (s) got.push({ seq: s.seq, bucket: s.new.bucket! });
        }
        d.close();
        d = openDb(path);
        // After the restart the poller sees the whole day again, then the rest.
        for (const r of readings) {
          const s = feed(d, r);
          if (s) got.push({ seq: s.seq, bucket: s.new.bucket! });
        }
        d.close();
        const expected: string[] = [];
        let max = Number.NEGATIVE_INFINITY;
        let last: string | null = null;
        readings.forEach((r, i) => {
          max = Math.max(max, r);
          const b = bucketFor(max, BUCKETS)!.label;
          if (i > 0 && b !== last) expected.push(b);
          last = b;
        });
        assert.deepEqual(
          got.map((g) => g.bucket),
          expected,
        );
        assert.deepEqual(
          got.map((g) => g.seq),
          expected.map((_, i) => i + 1),
        );
      },
    ),
    { numRuns: 60 },
  );
});
