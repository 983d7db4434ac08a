import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRateLimiter } from '../../src/lib/rate-limit.ts';

test('a bucket allows its burst, then refuses with the wait until the next token', () => {
  const l = createRateLimiter({ perMinute: 60, burst: 3 });
  for (let i = 0; i < 3; i++) assert.deepEqual(l.take('a', 0), { ok: true });
  assert.deepEqual(l.take('a', 0), { ok: false, retryAfterMs: 1000 });
  assert.deepEqual(l.take('a', 400), { ok: false, retryAfterMs: 600 });
  assert.deepEqual(l.take('a', 1000), { ok: true });
  // Another key has its own bucket.
  assert.deepEqual(l.take('b', 1000), { ok: true });
});

test('refill never exceeds the burst, and peek does not consume', () => {
  const l = createRateLimiter({ perMinute: 60, burst: 2 });
  l.take('a', 0);
  l.take('a', 0);
  assert.equal(l.peek('a', 3_600_000).ok, true);
  assert.equal(l.peek('a', 3_600_000).ok, true);
  assert.equal(l.take('a', 3_600_000).ok, true);
  assert.equal(l.take('a', 3_600_000).ok, true);
  assert.equal(l.take('a', 3_600_000).ok, false);
});

test('0 per minute turns the limit off and keeps no state', () => {
  const l = createRateLimiter({ perMinute: 0, burst: 1 });
  for (let i = 0; i < 1000; i++) assert.equal(l.take(`k${i % 3}`, 0).ok, true);
  assert.equal(l.size(), 0);
});

test('memory is bounded: refilled buckets are swept and the map is capped', () => {
  const l = createRateLimiter({ perMinute: 60, burst: 5 }, { maxKeys: 1000 });
  for (let i = 0; i < 5000; i++) l.take(`ip${i}`, 0);
  assert.equal(l.size(), 1000, 'capped at maxKeys, oldest evicted');
  // 5 s later every bucket is full again: the next take sweeps them all but its own.
  l.take('fresh', 5_000);
  assert.equal(l.size(), 1);
});

test('the cap evicts the least recently used key, not an active one', () => {
  const l = createRateLimiter({ perMinute: 1, burst: 1 }, { maxKeys: 2 });
  l.take('active', 0);
  l.take('idle', 1);
  l.take('active', 2); // refused (empty), and not re-inserted
  l.take('idle', 3);
  l.take('new', 4); // evicts the oldest insertion
  assert.equal(l.size(), 2);
});
