import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { bucketFor, formatLabel, isDead, orderBuckets, parseLabel } from '../../src/buckets/labels.ts';

const INF = Number.POSITIVE_INFINITY;

test('parses every label shape the markets use', () => {
  const cases: [string, number, number, 'C' | 'F'][] = [
    ['32-33°F', 32, 33, 'F'],
    ['27°F or below', -INF, 27, 'F'],
    ['38°F or higher', 38, INF, 'F'],
    ['14°C', 14, 14, 'C'],
    ['-2°C', -2, -2, 'C'],
    ['25°C or below', -INF, 25, 'C'],
    ['34°C or higher', 34, INF, 'C'],
    ['-5--4°F', -5, -4, 'F'],
    ['-1-0°F', -1, 0, 'F'],
    [' 40 – 41 ºF ', 40, 41, 'F'],
    ['\u22123°C', -3, -3, 'C'],
  ];
  for (const [label, lo, hi, unit] of cases) {
    assert.deepEqual(parseLabel(label), { label, lo, hi, unit }, label);
  }
});

test('rejects labels that are not a bucket', () => {
  for (const bad of [
    '',
    'Other',
    '33-32°F',
    '32-33',
    '32-33°K',
    '12.5°C',
    'between 32-33°F',
    '38°F or more than that',
  ]) {
    assert.equal(parseLabel(bad), null, bad);
  }
});

const rangeArb = fc.oneof(
  fc
    .record({
      lo: fc.integer({ min: -60, max: 130 }),
      span: fc.integer({ min: 0, max: 3 }),
      unit: fc.constantFrom('C' as const, 'F' as const),
    })
    .map(({ lo, span, unit }) => ({ lo, hi: lo + span, unit })),
  fc
    .record({ hi: fc.integer({ min: -60, max: 130 }), unit: fc.constantFrom('C' as const, 'F' as const) })
    .map(({ hi, unit }) => ({ lo: -INF, hi, unit })),
  fc
    .record({ lo: fc.integer({ min: -60, max: 130 }), unit: fc.constantFrom('C' as const, 'F' as const) })
    .map(({ lo, unit }) => ({ lo, hi: INF, unit })),
);

test('property: format then parse gives the same range', () => {
  fc.assert(
    fc.property(rangeArb, (r) => {
      const label = formatLabel(r);
      assert.deepEqual(parseLabel(label), { label, ...r });
    }),
  );
});

/** A ladder like the live ones: open bottom, `n` buckets of `width`, open top. */
function ladder(first: number, n: number, width: number, unit: 'C' | 'F') {
  const ranges = [{ lo: -INF, hi: first - 1, unit }];
  for (let i = 0; i < n; i++) ranges.push({ lo: first + i * width, hi: first + i * width + width - 1, unit });
  ranges.push({ lo: first + n * width, hi: INF, unit });
  return ranges.map((r) => parseLabel(formatLabel(r))!);
}

test('property: every whole reading falls in exactly one bucket of a full ladder; dead means wholly below', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: -40, max: 100 }),
      fc.integer({ min: 1, max: 12 }),
      fc.constantFrom(1, 2),
      fc.integer({ min: -80, max: 160 }),
      (first, n, width, reading) => {
        const buckets = ladder(first, n, width, width === 2 ? 'F' : 'C');
        const holding = buckets.filter((b) => reading >= b.lo && reading <= b.hi);
        assert.equal(holding.length, 1);
        assert.equal(bucketFor(reading, buckets), holding[0]);
        for (const b of buckets) assert.equal(isDead(b, reading), b.hi < reading);
        assert.equal(isDead(holding[0]!, reading), false);
      },
    ),
  );
});

test('fractional readings use the half-up rule; gaps give null', () => {
  const buckets = [parseLabel('32-33°F')!, parseLabel('36-37°F')!];
  assert.equal(bucketFor(33.4, buckets)?.label, '32-33°F');
  assert.equal(bucketFor(33.5, buckets), null);
  assert.equal(bucketFor(35.5, buckets)?.label, '36-37°F');
});

test('orderBuckets sorts a shuffled ladder and refuses overlaps or mixed units', () => {
  const ok = orderBuckets([parseLabel('38°F or higher')!, parseLabel('27°F or below')!, parseLabel('28-29°F')!]);
  assert.ok(ok.ok);
  assert.deepEqual(
    ok.buckets.map((b) => b.label),
    ['27°F or below', '28-29°F', '38°F or higher'],
  );
  assert.equal(orderBuckets([parseLabel('28-29°F')!, parseLabel('29-30°F')!]).ok, false);
  assert.equal(orderBuckets([parseLabel('28-29°F')!, parseLabel('14°C')!]).ok, false);
  assert.equal(orderBuckets([]).ok, false);
});
