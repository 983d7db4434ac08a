import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encodePacked, keccak256 } from 'viem';
import {
  bindingNonce,
  boundToBundle,
  currentSalt,
  decideBinding,
  epochAt,
  FIRST_STEP,
  SALT_EPOCH_S,
  SALT_STEPS_CHECKED,
  servedPoints,
  servedSalt,
  type SaltStep,
} from '../../src/payments/binding.ts';
import { MAX_AUTH_LIFETIME_S } from '../../packages/isocast-client/src/binding.ts';
import { buyerA, buyerB } from './buy.ts';

const secret = Buffer.alloc(32, 1);
const nowMs = 1_784_000_000_000;
const nowS = nowMs / 1000;
const MIN = SALT_EPOCH_S * 1000;

test('the nonce is keccak256(abi.encodePacked(payer, citySlug, uint256 count, bytes32 salt))', () => {
  const salt = currentSalt(secret, { city: 'nyc', count: 20, step: FIRST_STEP, nowMs });
  const manual = keccak256(
    `0x${buyerA.address.slice(2).toLowerCase()}${Buffer.from('nyc').toString('hex')}${(20).toString(16).padStart(64, '0')}${salt.slice(2)}`,
  );
  assert.equal(bindingNonce({ payer: buyerA.address, city: 'nyc', count: 20, salt }), manual);
  assert.equal(
    bindingNonce({ payer: buyerA.address, city: 'nyc', count: 20, salt }),
    keccak256(encodePacked(['address', 'string', 'uint256', 'bytes32'], [buyerA.address, 'nyc', 20n, salt])),
  );
});

test('salts depend on secret, city, count, purchase step and minute, and are 32 bytes', () => {
  const base = servedSalt(secret, { city: 'nyc', count: 20 }, { k: 3, epoch: 7 });
  assert.match(base, /^0x[0-9a-f]{64}$/);
  assert.equal(servedSalt(secret, { city: 'nyc', count: 20 }, { k: 3, epoch: 7 }), base);
  for (const other of [
    servedSalt(Buffer.alloc(32, 2), { city: 'nyc', count: 20 }, { k: 3, epoch: 7 }),
    servedSalt(secret, { city: 'miami', count: 20 }, { k: 3, epoch: 7 }),
    servedSalt(secret, { city: 'nyc', count: 21 }, { k: 3, epoch: 7 }),
    servedSalt(secret, { city: 'nyc', count: 20 }, { k: 4, epoch: 7 }),
    servedSalt(secret, { city: 'nyc', count: 20 }, { k: 3, epoch: 8 }),
  ]) {
    assert.notEqual(other, base);
  }
  // What a 402 serves: the current step, this minute.
  assert.equal(
    currentSalt(secret, { city: 'nyc', count: 20, step: { k: 3, sinceMs: 0 }, nowMs }),
    servedSalt(secret, { city: 'nyc', count: 20 }, { k: 3, epoch: epochAt(nowMs) }),
  );
});

test('served points: every minute since validBefore - max lifetime, for the step that was current then', () => {
  // Never bought: k = 0 for every minute a still-valid authorization can come from.
  const vb = nowS + 300;
  const first = servedPoints([], nowMs, vb);
  const lo = (vb - MAX_AUTH_LIFETIME_S) * 1000;
  assert.deepEqual(
    first,
    Array.from({ length: epochAt(nowMs) - epochAt(lo) + 1 }, (_, i) => ({ k: 0, epoch: epochAt(nowMs) - i })),
  );
  assert.deepEqual(servedPoints([FIRST_STEP], nowMs, vb), first);

  // Two purchases stepped k: 2 since 30 s ago, 1 since 3 min ago. Newest first, each step only
  // for the minutes it was served in (the minute of a step change carries both).
  const steps: SaltStep[] = [{ k: 2, sinceMs: nowMs - 30_000 }, { k: 1, sinceMs: nowMs - 3 * MIN }, FIRST_STEP];
  const pts = servedPoints(steps, nowMs, nowS + 60);
  assert.deepEqual(pts.slice(0, 2), [
    { k: 2, epoch: epochAt(nowMs) },
    ...(epochAt(nowMs - 30_000) < epochAt(nowMs)
      ? [{ k: 2, epoch: epochAt(nowMs - 30_000) }]
      : [{ k: 1, epoch: epochAt(nowMs) }]),
  ]);
  assert.ok(pts.some((p) => p.k === 1 && p.epoch === epochAt(nowMs - 2 * MIN)));
  assert.ok(!pts.some((p) => p.k === 2 && p.epoch === epochAt(nowMs - 2 * MIN)), 'k=2 was not served then');
  assert.ok(!pts.some((p) => p.k === 0 && p.epoch > epochAt(nowMs - 3 * MIN)), 'k=0 stopped being served');
  // The floor: nothing served before validBefore - max lifetime.
  const floor = epochAt((nowS + 60 - MAX_AUTH_LIFETIME_S) * 1000);
  assert.equal(Math.min(...pts.map((p) => p.epoch)), floor);
});

test('served points are bounded: at most the minutes of one lifetime plus SALT_STEPS_CHECKED steps', () => {
  // 500 purchases stepped k within the last 500 ms (someone paying a lot to move it).
  const steps: SaltStep[] = Array.from({ length: 500 }, (_, i) => ({ k: 500 - i, sinceMs: nowMs - i }));
  const pts = servedPoints(steps, nowMs, nowS + 1);
  const minutes = MAX_AUTH_LIFETIME_S / SALT_EPOCH_S + 1;
  assert.ok(pts.length <= minutes + SALT_STEPS_CHECKED, `${pts.length} points`);
  assert.equal(new Set(pts.map((p) => p.k)).size, SALT_STEPS_CHECKED);
  // Even a validBefore far in the past or future cannot widen it past one lifetime before now.
  assert.ok(servedPoints([], nowMs, 0).length <= minutes);
  assert.deepEqual(servedPoints([], nowMs, nowS + 10 * MAX_AUTH_LIFETIME_S), []);
});

test('a step stamped after now (another clock ahead) still counts from now', () => {
  const steps: SaltStep[] = [
    { k: 5, sinceMs: nowMs + 2 * MIN },
    { k: 4, sinceMs: nowMs - MIN },
  ];
  const pts = servedPoints(steps, nowMs, nowS + 300);
  assert.deepEqual(pts[0], { k: 5, epoch: epochAt(nowMs) });
  assert.ok(pts.some((p) => p.k === 4 && p.epoch === epochAt(nowMs)));
});

test('decideBinding finds the serving point, searched or echoed; other payers, cities, counts and stale salts are refused', () => {
  const steps: SaltStep[] = [{ k: 2, sinceMs: nowMs - 10_000 }, { k: 1, sinceMs: nowMs - 20 * MIN }, FIRST_STEP];
  // Served 5 minutes ago, when k was 1; two purchases later the buyer pays.
  const servedAt = nowMs - 5 * MIN;
  const salt = currentSalt(secret, { city: 'nyc', count: 20, step: steps[1]!, nowMs: servedAt });
  const nonce = bindingNonce({ payer: buyerA.address, city: 'nyc', count: 20, salt });
  const vb = servedAt / 1000 + 300;
  const check = { city: 'nyc', count: 20, steps, nowMs, validBefore: vb };
  const want = { k: 1, epoch: epochAt(servedAt) };
  assert.deepEqual(decideBinding(secret, check, null).bound(buyerA.address, nonce), want);
  assert.deepEqual(decideBinding(secret, check, salt).bound(buyerA.address, nonce), want);
  assert.equal(decideBinding(secret, check, null).bound(buyerB.address, nonce), null);
  assert.equal(decideBinding(secret, { ...check, city: 'miami' }, null).bound(buyerA.address, nonce), null);
  assert.equal(decideBinding(secret, { ...check, count: 21 }, null).bound(buyerA.address, nonce), null);
  assert.equal(decideBinding(secret, { ...check, count: 21 }, salt).echoRefused, true);
  assert.equal(decideBinding(secret, check, `0x${'11'.repeat(32)}`).echoRefused, true);
  // Uppercase hex is the same nonce and salt.
  const upper = (h: string) => `0x${h.slice(2).toUpperCase()}` as `0x${string}`;
  assert.deepEqual(decideBinding(secret, check, null).bound(buyerA.address, upper(nonce)), want);
  assert.deepEqual(decideBinding(secret, check, upper(salt)).bound(buyerA.address, nonce), want);
  // A salt served longer than one lifetime before validBefore cannot back a still-valid authorization.
  const oldAt = nowMs - MAX_AUTH_LIFETIME_S * 1000 - 2 * MIN;
  const oldNonce = bindingNonce({
    payer: buyerA.address,
    city: 'nyc',
    count: 20,
    salt: currentSalt(secret, { city: 'nyc', count: 20, step: steps[1]!, nowMs: oldAt }),
  });
  assert.equal(decideBinding(secret, { ...check, validBefore: nowS + 10 }, null).bound(buyerA.address, oldNonce), null);
  // A salt for a step never served (k = 3 does not exist yet) is refused.
  const future = bindingNonce({
    payer: buyerA.address,
    city: 'nyc',
    count: 20,
    salt: servedSalt(secret, { city: 'nyc', count: 20 }, { k: 3, epoch: epochAt(nowMs) }),
  });
  assert.equal(decideBinding(secret, check, null).bound(buyerA.address, future), null);
});

test('bindingNonce and mockTxHash pack exactly as viem encodePacked, for any payer, slug, count and salt', async () => {
  const { randomBytes } = await import('node:crypto');
  const { mockTxHash } = await import('../../src/payments/settlers/mock.ts');
  const hex = (n: number) => `0x${randomBytes(n).toString('hex')}` as const;
  const slugs = ['nyc', 'los-angeles', '', 'são-paulo', '東京', 'x'.repeat(200)];
  const counts = [0, 1, 20, 999, 2 ** 32 + 5, Number.MAX_SAFE_INTEGER];
  for (let i = 0; i < 200; i++) {
    const payer = i % 2 ? buyerB.address : (hex(20) as `0x${string}`);
    const city = slugs[i % slugs.length]!;
    const count = counts[i % counts.length]!;
    const salt = hex(32);
    assert.equal(
      bindingNonce({ payer, city, count, salt }),
      keccak256(encodePacked(['address', 'string', 'uint256', 'bytes32'], [payer, city, BigInt(count), salt])),
    );
    const nonce = hex(32);
    assert.equal(mockTxHash(payer, nonce), keccak256(encodePacked(['address', 'bytes32'], [payer, nonce])));
  }
  // What encodePacked refuses, these refuse too.
  assert.throws(() => bindingNonce({ payer: '0x1234' as `0x${string}`, city: 'nyc', count: 20, salt: hex(32) }));
  assert.throws(() => bindingNonce({ payer: buyerA.address, city: 'nyc', count: 20, salt: hex(31) }));
  assert.throws(() => bindingNonce({ payer: buyerA.address, city: 'nyc', count: -1, salt: hex(32) }));
  assert.throws(() => mockTxHash(buyerA.address, hex(31)));
});

test('decideBinding is the whole decision: an unserved echo is refused before recovery; an echo binds only its own salt; no echo searches the served salts', () => {
  const steps: SaltStep[] = [{ k: 1, sinceMs: nowMs - 10 * MIN }, FIRST_STEP];
  const check = { city: 'nyc', count: 20, steps, nowMs, validBefore: nowS + 300 };
  const salt = currentSalt(secret, { city: 'nyc', count: 20, step: steps[0]!, nowMs });
  const older = currentSalt(secret, { city: 'nyc', count: 20, step: steps[0]!, nowMs: nowMs - 2 * MIN });
  const nonce = bindingNonce({ payer: buyerA.address, city: 'nyc', count: 20, salt });
  const want = { k: 1, epoch: epochAt(nowMs) };

  const plain = decideBinding(secret, check, null);
  assert.equal(plain.echoRefused, false);
  assert.deepEqual(plain.bound(buyerA.address, nonce), want);
  assert.equal(plain.bound(buyerB.address, nonce), null);

  const echoed = decideBinding(secret, check, salt);
  assert.equal(echoed.echoRefused, false);
  assert.deepEqual(echoed.bound(buyerA.address, nonce), want);
  assert.equal(echoed.bound(buyerB.address, nonce), null);
  // Echoing another served salt than the one the nonce is bound to is a mismatch, not a search.
  assert.equal(decideBinding(secret, check, older).bound(buyerA.address, nonce), null);

  const forged = decideBinding(secret, check, `0x${'11'.repeat(32)}`);
  assert.equal(forged.echoRefused, true);
  assert.equal(forged.bound(buyerA.address, nonce), null);
});

test('a known payment stays bound to the bundle it was bought for', () => {
  assert.equal(boundToBundle({ city: 'nyc', count: 20 }, 'nyc', 20), true);
  assert.equal(boundToBundle({ city: 'nyc', count: 20 }, 'nyc', 21), false);
  assert.equal(boundToBundle({ city: 'nyc', count: 20 }, 'miami', 20), false);
});
