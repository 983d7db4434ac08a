import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseCount, parseSince, requireCity } from '../../src/payments/bundle.ts';
import { ApiError } from '../../src/lib/errors.ts';

const fails = (fn: () => unknown, status: number, message: string) =>
  assert.throws(
    fn,
    (e: unknown) =>
      e instanceof ApiError &&
      e.status === status &&
      e.message === message &&
      (status !== 400 || message.startsWith('since') || message.startsWith('city') || e.extra.minSpendUsd === 0.01),
  );

test('count: integers 2..10000, default only where one is given', () => {
  assert.equal(parseCount('2'), 2);
  assert.equal(parseCount('10000'), 10000);
  assert.equal(parseCount(undefined, 20), 20);
  assert.equal(parseCount('', 20), 20);
  for (const bad of [undefined, '', '1', '0', '-2', '2.0', '2.5', '1e3', ' 2', '0x10', 'two'])
    fails(() => parseCount(bad), 400, 'count must be an integer of at least 2');
  fails(() => parseCount('10001'), 400, 'count must be at most 10000');
  // Above the maximum says so whatever the size or spelling (issue 13 item 6).
  for (const big of ['99999999999', '999999999999999999999', '1e30', '1e400', '10001.5'])
    fails(() => parseCount(big), 400, 'count must be at most 10000');
});

test('since: integer >= 0, default 0; city: required, active', () => {
  assert.equal(parseSince(undefined), 0);
  assert.equal(parseSince('17'), 17);
  for (const bad of ['-1', '1.5', 'x']) fails(() => parseSince(bad), 400, 'since must be an integer of at least 0');
  fails(() => requireCity(undefined, () => true), 400, 'city is required');
  fails(() => requireCity('x', () => false), 404, 'unknown city');
  assert.equal(
    requireCity('nyc', (s) => s === 'nyc'),
    'nyc',
  );
});
