import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { detect, type DayState } from '../../src/signals/detect.ts';
import { isDead } from '../../src/buckets/labels.ts';
import { dailyExtreme, dailyHighReading, dailyHighReport, type Observation } from '../../src/buckets/daily-high.ts';
import { ladderF } from '../buckets/ladder.ts';

const NYC = ladderF(28); // 27°F or below, 28-29 ... 44-45, 46°F or higher

test('a low stream: the first reading is the baseline; only a lower reading moves the state', () => {
  const base = detect(null, 41, { buckets: NYC, kind: 'low' });
  assert.deepEqual(base, { next: { high: 41, bucket: '40-41°F' }, changed: true, baseline: true, crossing: null });
  const s: DayState = base.next;
  assert.deepEqual(detect(s, 43, { buckets: NYC, kind: 'low' }), {
    next: s,
    changed: false,
    baseline: false,
    crossing: null,
  });
  assert.deepEqual(detect(s, 41, { buckets: NYC, kind: 'low' }), {
    next: s,
    changed: false,
    baseline: false,
    crossing: null,
  });
  const sameBucket = detect(s, 40, { buckets: NYC, kind: 'low' });
  assert.equal(sameBucket.crossing, null);
  assert.deepEqual(sameBucket.next, { high: 40, bucket: '40-41°F' });
  const down = detect(sameBucket.next, 39, { buckets: NYC, kind: 'low' });
  assert.deepEqual(down.crossing, { old: { reading: 40, bucket: '40-41°F' }, new: { reading: 39, bucket: '38-39°F' } });
});

test('a low stream falling through the open bottom bucket emits once into it', () => {
  const d = detect({ high: 29, bucket: '28-29°F' }, 20, { buckets: NYC, kind: 'low' });
  assert.equal(d.crossing?.new.bucket, '27°F or below');
  assert.equal(detect(d.next, 10, { buckets: NYC, kind: 'low' }).crossing, null);
});

test('property: a low stream enters each bucket at most once, always colder than the last', () => {
  fc.assert(
    fc.property(fc.array(fc.integer({ min: 10, max: 60 }), { minLength: 1, maxLength: 60 }), (readings) => {
      let state: DayState | null = null;
      const entered: string[] = [];
      let last = Number.POSITIVE_INFINITY;
      for (const r of readings) {
        const d = detect(state, r, { buckets: NYC, kind: 'low' });
        if (d.crossing) {
          assert.ok(d.crossing.new.reading < d.crossing.old.reading);
          assert.ok(d.crossing.new.reading < last);
          entered.push(d.crossing.new.bucket);
        }
        state = d.next;
        last = Math.min(last, r);
      }
      assert.equal(new Set(entered).size, entered.length);
      assert.equal(state!.high, Math.min(...readings));
    }),
  );
});

test('dead buckets: for a low every bucket wholly above the running minimum, for a high every one below', () => {
  const b = (lo: number, hi: number) => ({ lo, hi });
  // Running low 39: 40-41 can no longer win (the low only falls), 38-39 and below still can.
  assert.equal(isDead(b(40, 41), 39, 'low'), true);
  assert.equal(isDead(b(38, 39), 39, 'low'), false);
  assert.equal(isDead(b(Number.NEGATIVE_INFINITY, 27), 39, 'low'), false);
  assert.equal(isDead(b(46, Number.POSITIVE_INFINITY), 39, 'low'), true);
  // The high's rule is unchanged.
  assert.equal(isDead(b(36, 37), 39), true);
  assert.equal(isDead(b(40, 41), 39), false);
});

test('the day low reads the same reports and rounding as the high, in the other direction', () => {
  const tz = 'America/New_York';
  const at = (h: number, m = 51) => Date.UTC(2026, 2, 24, h + 4, m); // EDT
  const obs: Observation[] = [
    { atMs: at(0), temp: 3.9, unit: 'C', report: 'routine' },
    { atMs: at(4, 12), temp: 1.1, unit: 'C', report: 'special' }, // a SPECI carries the night's minimum
    { atMs: at(4), temp: 1.7, unit: 'C', report: 'routine' },
    { atMs: at(6), temp: 2.2, unit: 'C', report: 'routine' },
    { atMs: at(15), temp: 9.4, unit: 'C', report: 'routine' },
  ];
  assert.equal(dailyExtreme(obs, { timezone: tz, date: '2026-03-24', kind: 'noaa-all', extreme: 'low' })!.temp, 1.1);
  assert.equal(
    dailyHighReading(obs, { timezone: tz, date: '2026-03-24', unit: 'F', kind: 'noaa-all', extreme: 'low' }),
    34,
  ); // 1.1 °C = 33.98 °F
  assert.equal(
    dailyHighReading(obs, { timezone: tz, date: '2026-03-24', unit: 'F', kind: 'noaa-hourly', extreme: 'low' }),
    35,
  ); // SPECI left out: 1.7 °C = 35.06 °F
  const low = dailyHighReport(obs, { timezone: tz, date: '2026-03-24', unit: 'F', kind: 'noaa-all', extreme: 'low' });
  assert.deepEqual([low?.reading, low?.reportedAtMs, low?.report.atMs], [34, at(4, 12), at(4, 12)]);
  assert.equal(dailyHighReading(obs, { timezone: tz, date: '2026-03-24', unit: 'F', kind: 'noaa-all' }), 49);
});

test('Hong Kong low: the floor of the 0.1 °C minimum, as the high', () => {
  const obs: Observation[] = [
    { atMs: Date.UTC(2026, 4, 30, 20), temp: 27.9, unit: 'C' },
    { atMs: Date.UTC(2026, 4, 30, 22), temp: 27.4, unit: 'C' },
    { atMs: Date.UTC(2026, 4, 31, 6), temp: 31.2, unit: 'C' },
  ];
  assert.equal(
    dailyHighReading(obs, { timezone: 'Asia/Hong_Kong', date: '2026-05-31', unit: 'C', kind: 'hko', extreme: 'low' }),
    27,
  );
  assert.equal(
    dailyHighReading(obs, {
      timezone: 'Asia/Hong_Kong',
      date: '2026-05-31',
      unit: 'C',
      kind: 'wu-table',
      extreme: 'low',
    }),
    27,
  );
  assert.equal(dailyHighReading(obs, { timezone: 'Asia/Hong_Kong', date: '2026-05-31', unit: 'C', kind: 'hko' }), 31);
});

test('replay folds a low day with the poller path: colder buckets only, the final low', async () => {
  const { runReplay } = await import('../../src/replay/run.ts');
  const { marketFromLabels } = await import('../../src/replay/market.ts');
  const { lowStreamOf } = await import('../../src/cities/catalog.ts');
  const { CITY_ROWS } = await import('../../src/cities/catalog.ts');
  const nycLow = lowStreamOf(CITY_ROWS.find((c) => c.slug === 'nyc')!);
  const at = (h: number) => Date.parse('2026-06-04T04:51:00Z') + h * 3_600_000;
  const observations: Observation[] = [20.0, 19.4, 18.9, 16.7, 18.0, 26.1].map((temp, h) => ({
    atMs: at(h),
    temp,
    unit: 'C' as const,
  }));
  const market = marketFromLabels(
    '55°F or below,56-57°F,58-59°F,60-61°F,62-63°F,64-65°F,66-67°F,68-69°F,70-71°F,72-73°F,74°F or higher',
  );
  const r = runReplay({ city: nycLow, date: '2026-06-04', observations, source: 'file', market });
  assert.deepEqual(r.baseline?.bucket, '68-69°F');
  assert.deepEqual(
    r.signals.map((s) => [s.seq, s.old.bucket, s.new.bucket]),
    [
      [1, '68-69°F', '66-67°F'],
      [2, '66-67°F', '62-63°F'],
    ],
  );
  assert.deepEqual([r.final?.reading, r.final?.bucket], [62, '62-63°F']);
});

test('a catalog with lows: every high gets one twin, and re-serving a low stream adds nothing', async () => {
  const { createCatalog } = await import('../../src/cities/catalog.ts');
  const { CITY_ROWS } = await import('../../src/cities/catalog.ts');
  const c = createCatalog(CITY_ROWS, { mode: 'spec' }, 'high,low');
  assert.equal(c.active.length, 74);
  for (const s of c.active) assert.equal(c.serve(s), false, s.slug);
  assert.equal(c.active.length, 74);
  assert.equal(c.get('nyc-low-low'), undefined);
  const onlyLow = createCatalog(CITY_ROWS, { mode: 'list', slugs: ['nyc'] }, 'low');
  assert.deepEqual(
    onlyLow.active.map((r) => r.slug),
    ['nyc-low'],
  );
});
