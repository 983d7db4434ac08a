import { test } from 'node:test';
import assert from 'node:assert/strict';
import { backoffMs } from '../../src/lib/backoff.ts';
import { createCatalog } from '../../src/cities/catalog.ts';
import { createPollHealth } from '../../src/poller/health.ts';
import { UpstreamError } from '../../src/lib/errors.ts';

test('doubles from the base, capped, finite however long the streak', () => {
  assert.deepEqual(
    [0, 1, 2, 3, 4, 10].map((a) => backoffMs(a, 2_000, 20_000)),
    [2_000, 2_000, 4_000, 8_000, 16_000, 20_000],
  );
  assert.equal(backoffMs(5_000, 1_000, 60_000), 60_000);
  assert.equal(backoffMs(5_000, 0, 60_000), 0);
});

test('the poller waits by the same formula, or the upstream Retry-After if longer (capped)', () => {
  const b = createPollHealth(createCatalog(), 1_000, 10_000);
  assert.deepEqual(
    [1, 2, 3, 4, 5].map(() => b.fail('nyc', 0, { err: new Error('x'), error: 'x' }).retryAtMs),
    [1_000, 2_000, 4_000, 8_000, 10_000],
  );
  b.ok('nyc', 0);
  assert.equal(
    b.fail('nyc', 0, { err: new UpstreamError('metar', 'slow down', { retryAfterMs: 7_000 }), error: 'x' }).retryAtMs,
    7_000,
  );
});
