import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { detect, type DayState } from '../../src/signals/detect.ts';
import { bucketFor, parseLabel } from '../../src/buckets/labels.ts';
import { ladderF } from '../buckets/ladder.ts';
import { dailyHighReading, type Observation } from '../../src/buckets/daily-high.ts';

const NYC = ladderF(28); // 27°F or below, 28-29 ... 44-45, 46°F or higher

test('the first reading of a day is the baseline and emits nothing', () => {
  const d = detect(null, 33, { buckets: NYC });
  assert.deepEqual(d, { next: { high: 33, bucket: '32-33°F' }, changed: true, baseline: true, crossing: null });
});

test('a move into a new bucket emits one crossing with old and new readings', () => {
  const d = detect({ high: 33, bucket: '32-33°F' }, 34, { buckets: NYC });
  assert.deepEqual(d.crossing, { old: { reading: 33, bucket: '32-33°F' }, new: { reading: 34, bucket: '34-35°F' } });
  assert.deepEqual(d.next, { high: 34, bucket: '34-35°F' });
});

test('the daily high never decreases: lower and equal readings change nothing', () => {
  const s: DayState = { high: 35, bucket: '34-35°F' };
  assert.deepEqual(detect(s, 30, { buckets: NYC }), { next: s, changed: false, baseline: false, crossing: null });
  assert.deepEqual(detect(s, 35, { buckets: NYC }), { next: s, changed: false, baseline: false, crossing: null });
});

test('a higher high inside the same bucket updates the state without a crossing', () => {
  const d = detect({ high: 34, bucket: '34-35°F' }, 35, { buckets: NYC });
  assert.equal(d.crossing, null);
  assert.equal(d.changed, true);
  assert.deepEqual(d.next, { high: 35, bucket: '34-35°F' });
});

test('a jump over several buckets is one transition to the bucket reached', () => {
  const d = detect({ high: 29, bucket: '28-29°F' }, 40, { buckets: NYC });
  assert.deepEqual(d.crossing, { old: { reading: 29, bucket: '28-29°F' }, new: { reading: 40, bucket: '40-41°F' } });
});

test('open-ended buckets are entered like any other', () => {
  assert.equal(detect({ high: 20, bucket: '27°F or below' }, 28, { buckets: NYC }).crossing?.new.bucket, '28-29°F');
  assert.equal(detect({ high: 45, bucket: '44-45°F' }, 60, { buckets: NYC }).crossing?.new.bucket, '46°F or higher');
});

test('a reading in a ladder gap raises the high but emits nothing until a bucket is entered', () => {
  const gappy = [parseLabel('32-33°F')!, parseLabel('36-37°F')!];
  const a = detect({ high: 33, bucket: '32-33°F' }, 34, { buckets: gappy });
  assert.deepEqual(a, { next: { high: 34, bucket: '32-33°F' }, changed: true, baseline: false, crossing: null });
  assert.deepEqual(detect(a.next, 36, { buckets: gappy }).crossing, {
    old: { reading: 34, bucket: '32-33°F' },
    new: { reading: 36, bucket: '36-37°F' },
  });
});

test('local-day detection across DST: the evening of the spring-forward day in New York stays on that day', () => {
  // 2026-03-08 is 23 hours long in New York; 23:30 EDT is 03:30Z on the 9th.
  const obs: Observation[] = [
    { atMs: Date.parse('2026-03-08T14:00:00Z'), temp: 3.3, unit: 'C' }, // 38 °F
    { atMs: Date.parse('2026-03-09T03:30:00Z'), temp: 5.6, unit: 'C' }, // 42 °F at 23:30 local on the 8th
  ];
  const early = dailyHighReading(obs.slice(0, 1), { timezone: 'America/New_York', date: '2026-03-08', unit: 'F' })!;
  const late = dailyHighReading(obs, { timezone: 'America/New_York', date: '2026-03-08', unit: 'F' })!;
  const base = detect(null, early, { buckets: NYC });
  assert.equal(detect(base.next, late, { buckets: NYC }).crossing?.new.bucket, '42-43°F');
  assert.equal(dailyHighReading(obs, { timezone: 'America/New_York', date: '2026-03-09', unit: 'F' }), null);
});

test('property: the crossings are exactly the bucket entries of the running max after the baseline', () => {
  fc.assert(
    fc.property(fc.array(fc.integer({ min: 10, max: 70 }), { minLength: 1, maxLength: 60 }), (readings) => {
      let state: DayState | null = null;
      const emitted: string[] = [];
      for (const r of readings) {
        const d = detect(state, r, { buckets: NYC });
        if (d.crossing) emitted.push(d.crossing.new.bucket);
        state = d.next;
      }
      // Model: buckets of the running maximum, consecutive duplicates collapsed, baseline dropped.
      const expected: string[] = [];
      let max = Number.NEGATIVE_INFINITY;
      let last: string | null = null;
      readings.forEach((r, i) => {
        max = Math.max(max, r);
        const b = bucketFor(max, NYC)!.label;
        if (i > 0 && b !== last) expected.push(b);
        last = b;
      });
      assert.deepEqual(emitted, expected);
      assert.equal(new Set(emitted).size, emitted.length, 'a bucket is entered at most once');
      assert.equal(state!.high, Math.max(...readings));
    }),
  );
});
