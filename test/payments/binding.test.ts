import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encodePacked, keccak256 } from 'viem';
import {
  acceptedWindows,
  BINDING_WINDOW_S,
  bindingNonce,
  bindingSalt,
  matchBinding,
  MAX_AUTH_LIFETIME_S,
  windowAt,
} from '../../src/payments/binding.ts';
import { buyerA, buyerB } from './buy.ts';

const secret = Buffer.alloc(32, 1);
const now = 1_784_000_000;

test('the nonce is keccak256(abi.encodePacked(payer, citySlug, uint256 count, bytes32 salt))', () => {
  const salt = bindingSalt(secret, 'nyc', 20, windowAt(now));
  const manual = keccak256(
    `0x${buyerA.address.slice(2).toLowerCase()}${Buffer.from('nyc').toString('hex')}${(20).toString(16).padStart(64, '0')}${salt.slice(2)}`,
  );
  assert.equal(bindingNonce(buyerA.address, 'nyc', 20, salt), manual);
  assert.equal(
    bindingNonce(buyerA.address, 'nyc', 20, salt),
    keccak256(encodePacked(['address', 'string', 'uint256', 'bytes32'], [buyerA.address, 'nyc', 20n, salt])),
  );
});

test('salts depend on secret, city, count and window, and are 32 bytes', () => {
  const base = bindingSalt(secret, 'nyc', 20, 7);
  assert.match(base, /^0x[0-9a-f]{64}$/);
  assert.equal(bindingSalt(secret, 'nyc', 20, 7), base);
  for (const other of [
    bindingSalt(Buffer.alloc(32, 2), 'nyc', 20, 7),
    bindingSalt(secret, 'miami', 20, 7),
    bindingSalt(secret, 'nyc', 21, 7),
    bindingSalt(secret, 'nyc', 20, 8),
  ]) {
    assert.notEqual(other, base);
  }
});

test('accepted windows are exactly those touching [validBefore - max lifetime, now]', () => {
  const vb = now + 300;
  const ws = acceptedWindows(now, vb);
  assert.equal(ws[0], windowAt(now));
  assert.equal(ws.at(-1), windowAt(vb - MAX_AUTH_LIFETIME_S));
  assert.equal(ws.length, windowAt(now) - windowAt(vb - MAX_AUTH_LIFETIME_S) + 1);
  // An authorization about to expire can only come from windows within the lifetime before it.
  assert.deepEqual(
    acceptedWindows(now, now + 1),
    Array.from({ length: windowAt(now) - windowAt(now + 1 - MAX_AUTH_LIFETIME_S) + 1 }, (_, i) => windowAt(now) - i),
  );
});

test('matchBinding finds the serving window and refuses other payers, cities, counts and stale salts', () => {
  const served = now - 5 * BINDING_WINDOW_S;
  const salt = bindingSalt(secret, 'nyc', 20, windowAt(served));
  const nonce = bindingNonce(buyerA.address, 'nyc', 20, salt);
  const vb = served + 300;
  assert.equal(
    matchBinding(secret, { payer: buyerA.address, city: 'nyc', count: 20, nonce, nowSeconds: now, validBefore: vb }),
    windowAt(served),
  );
  assert.equal(
    matchBinding(secret, { payer: buyerB.address, city: 'nyc', count: 20, nonce, nowSeconds: now, validBefore: vb }),
    null,
  );
  assert.equal(
    matchBinding(secret, { payer: buyerA.address, city: 'miami', count: 20, nonce, nowSeconds: now, validBefore: vb }),
    null,
  );
  assert.equal(
    matchBinding(secret, { payer: buyerA.address, city: 'nyc', count: 21, nonce, nowSeconds: now, validBefore: vb }),
    null,
  );
  // A salt from a window older than any still-valid authorization could use is refused.
  const old = now - MAX_AUTH_LIFETIME_S - 2 * BINDING_WINDOW_S;
  const oldNonce = bindingNonce(buyerA.address, 'nyc', 20, bindingSalt(secret, 'nyc', 20, windowAt(old)));
  assert.equal(
    matchBinding(secret, {
      payer: buyerA.address,
      city: 'nyc',
      count: 20,
      nonce: oldNonce,
      nowSeconds: now,
      validBefore: now + 10,
    }),
    null,
  );
  // Uppercase hex nonces are the same nonce.
  assert.equal(
    matchBinding(secret, {
      payer: buyerA.address,
      city: 'nyc',
      count: 20,
      nonce: nonce.toUpperCase().replace('0X', '0x') as `0x${string}`,
      nowSeconds: now,
      validBefore: vb,
    }),
    windowAt(served),
  );
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
      bindingNonce(payer, city, count, salt),
      keccak256(encodePacked(['address', 'string', 'uint256', 'bytes32'], [payer, city, BigInt(count), salt])),
    );
    const nonce = hex(32);
    assert.equal(mockTxHash(payer, nonce), keccak256(encodePacked(['address', 'bytes32'], [payer, nonce])));
  }
  // What encodePacked refuses, these refuse too.
  assert.throws(() => bindingNonce('0x1234' as `0x${string}`, 'nyc', 20, hex(32)));
  assert.throws(() => bindingNonce(buyerA.address, 'nyc', 20, hex(31)));
  assert.throws(() => bindingNonce(buyerA.address, 'nyc', -1, hex(32)));
  assert.throws(() => mockTxHash(buyerA.address, hex(31)));
});
