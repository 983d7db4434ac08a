import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bundlePrice, MAX_COUNT, TIERS } from '../../packages/isocast-client/src/pricing.ts';
import { MIN_SPEND_MICRO } from '../../src/pricing/tiers.ts';
import { tierFor } from '../../packages/isocast-client/src/pricing.ts';
import { formatUsdPrice, microToUsd } from '../../src/lib/money.ts';

test('every tier edge picks the tier with the largest minCount not above the count', () => {
  const expect: [number, string, number][] = [
    [2, 'Min', 5000],
    [19, 'Min', 5000],
    [20, 'Starter', 5000],
    [99, 'Starter', 5000],
    [100, 'Standard', 4500],
    [499, 'Standard', 4500],
    [500, 'Pro', 4000],
    [1999, 'Pro', 4000],
    [2000, 'Whale', 3500],
    [MAX_COUNT, 'Whale', 3500],
  ];
  for (const [count, name, unit] of expect) {
    const p = bundlePrice(count);
    assert.equal(p.tier.name, name, `count ${count}`);
    assert.equal(p.unitMicro, unit);
    assert.equal(p.totalMicro, unit * count);
  }
});

test('tier totals at their minimum counts match the spec table exactly', () => {
  const totals = TIERS.map((t) => [t.name, microToUsd(bundlePrice(t.minCount).totalMicro)]);
  assert.deepEqual(totals, [
    ['Min', 0.01],
    ['Starter', 0.1],
    ['Standard', 0.45],
    ['Pro', 2],
    ['Whale', 7],
  ]);
  assert.deepEqual(
    TIERS.map((t) => microToUsd(t.unitMicro)),
    [0.005, 0.005, 0.0045, 0.004, 0.0035],
  );
});

test('every count from 2 to MAX_COUNT has an integer total at or above the minimum spend', () => {
  let prevUnit = Infinity;
  for (let n = 2; n <= MAX_COUNT; n++) {
    const p = bundlePrice(n);
    assert.ok(Number.isSafeInteger(p.totalMicro));
    assert.ok(p.totalMicro >= MIN_SPEND_MICRO);
    assert.ok(p.unitMicro <= prevUnit, 'unit price never rises with count');
    prevUnit = p.unitMicro;
  }
});

test('counts below 2 or non-integers are refused', () => {
  for (const bad of [1, 0, -5, 2.5, Number.NaN]) assert.throws(() => tierFor(bad), RangeError);
});

test('price strings and USD numbers are exact', () => {
  assert.equal(formatUsdPrice(10_000), '$0.01');
  assert.equal(formatUsdPrice(450_000), '$0.45');
  assert.equal(formatUsdPrice(2_000_000), '$2.00');
  assert.equal(formatUsdPrice(4_500), '$0.0045');
  assert.equal(formatUsdPrice(123_456_789), '$123.456789');
  assert.equal(microToUsd(7_000_000), 7);
  assert.throws(() => microToUsd(0.5));
});
