import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createKindCache } from '../../src/payments/settlers/negotiate.ts';
import type { JsonAnswer } from '../../src/lib/http-client.ts';

/**
 * Issue 35 item 6: a refusal naming the network makes the next payment read `/supported` again,
 * but a burst of such refusals costs one read (single-flight), and refusals after it cost none
 * until retryMs has passed: a buyer who can make the facilitator refuse cannot make every
 * payment wait for `/supported`.
 */
const body = { kinds: [{ x402Version: 2, scheme: 'exact', network: 'eip155:8453' }], extensions: [], signers: {} };
const LISTS_V2: JsonAnswer = { status: 200, json: body, text: JSON.stringify(body) };

test('refusals naming the network: one shared read of /supported, then none for retryMs', async () => {
  let nowMs = 1_000_000;
  let reads = 0;
  let release: () => void = () => {};
  let gate = Promise.resolve();
  const cache = createKindCache({
    now: () => nowMs,
    fetch: async () => {
      reads++;
      await gate;
      return LISTS_V2;
    },
  });
  await cache.current();
  assert.equal(reads, 1, 'the first payment reads it');
  await cache.current();
  assert.equal(reads, 1, 'cached');

  // A refusal, then 50 payments at once: one read, every payment waits on it.
  cache.invalidate();
  gate = new Promise((r) => (release = r));
  const burst = Array.from({ length: 50 }, () => cache.current());
  release();
  await Promise.all(burst);
  assert.equal(reads, 2);

  // More refusals within retryMs: no read at all.
  for (let i = 0; i < 20; i++) {
    cache.invalidate();
    await cache.current();
  }
  assert.equal(reads, 2);
  // Past retryMs a refusal reads once more.
  nowMs += 10_000;
  cache.invalidate();
  await cache.current();
  await cache.current();
  assert.equal(reads, 3);
});
