import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  checkSignedRequest,
  SIGNED_REQUEST_SKEW_SEC,
  SKEW_RULE,
  signedLifetime,
  singleUseCutoff,
  skewOf,
} from '../../src/lib/signed-request.ts';

const nowMs = 1_784_000_000_000;
const nowS = nowMs / 1000;

test('the skew is 600 s, said once', () => {
  assert.equal(SIGNED_REQUEST_SKEW_SEC, 600);
  assert.equal(SKEW_RULE, 'within 600 s of server time');
});

test('a signed timestamp exactly 600 s either way passes; 601 s either way is stale', async () => {
  const isStale = (now: number, timestamp: number) =>
    checkSignedRequest({ nowMs: now, timestamp, verify: async () => true }).then(
      () => false,
      (err: { code?: string }) => (err.code === 'stale_timestamp' ? true : Promise.reject(err)),
    );
  assert.equal(await isStale(nowMs, nowS), false);
  assert.equal(await isStale(nowMs, nowS + 600), false);
  assert.equal(await isStale(nowMs, nowS - 600), false);
  assert.equal(await isStale(nowMs, nowS + 601), true);
  assert.equal(await isStale(nowMs, nowS - 601), true);
  // The server's clock is truncated to whole seconds, the unit a client signs.
  assert.equal(await isStale(nowMs + 999, nowS - 600), false);
  assert.equal(await isStale(nowMs + 999, nowS + 600), false);
});

test('skewOf names the side: ahead or behind by more than 600 s, null within (ms)', () => {
  assert.equal(skewOf(nowMs, nowMs + 600_000), null);
  assert.equal(skewOf(nowMs, nowMs - 600_000), null);
  assert.equal(skewOf(nowMs, nowMs + 601_000), 'ahead');
  assert.equal(skewOf(nowMs, nowMs - 601_000), 'behind');
  assert.equal(skewOf(nowMs, nowMs + 600_001), 'ahead', 'a sign-in is compared to the millisecond');
});

test('a signed lifetime: expiry in the future, at most 600 s after now and after the issue instant', () => {
  const life = (issuedAtMs: number, expiresAtMs: number) => signedLifetime({ nowMs, issuedAtMs, expiresAtMs });
  assert.equal(life(nowMs, nowMs + 600_000), null);
  assert.equal(life(nowMs, nowMs + 601_000), 'tooLong');
  assert.equal(life(nowMs, nowMs), 'expired', 'an expiry of now has passed');
  assert.equal(life(nowMs - 60_000, nowMs - 1), 'expired');
  // Within 600 s of now, but made to last longer than one window from its issue.
  assert.equal(life(nowMs - 300_000, nowMs + 300_001), 'tooLong');
  assert.equal(life(nowMs - 300_000, nowMs + 300_000), null);
});

test('a single use is forgotten once its instant is more than twice the skew old, in the column unit', () => {
  assert.equal(singleUseCutoff(nowMs, 'ms'), nowMs - 1_200_000);
  assert.equal(singleUseCutoff(nowMs, 's'), nowS - 1200);
  assert.equal(singleUseCutoff(nowMs + 999, 's'), nowS - 1200, 'whole seconds, truncated');
  // A timestamp that still passes the clock rule is never forgotten.
  assert.ok(nowS - SIGNED_REQUEST_SKEW_SEC >= singleUseCutoff(nowMs, 's'));
});
