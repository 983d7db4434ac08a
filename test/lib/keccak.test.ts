import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { keccak256 } from 'viem';
import { keccak256Bytes, keccak256Hex } from '../../src/lib/keccak.ts';

test('keccak256 equals viem on every length from 0 to 3 blocks and on large inputs', () => {
  for (let n = 0; n <= 3 * 136 + 1; n++) {
    const data = new Uint8Array(randomBytes(n));
    assert.equal(keccak256Hex(data), keccak256(data), `length ${n}`);
  }
  for (const n of [1_000, 4_096, 65_537]) {
    const data = new Uint8Array(randomBytes(n));
    assert.equal(keccak256Hex(data), keccak256(data), `length ${n}`);
  }
});

test('known answers: the empty string and an ERC-20 selector preimage', () => {
  assert.equal(keccak256Hex(new Uint8Array(0)), '0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470');
  assert.equal(keccak256Hex(Buffer.from('transfer(address,uint256)')).slice(0, 10), '0xa9059cbb');
});

test('bytes and hex agree, inputs are not modified, and calls do not leak state into each other', () => {
  const data = new Uint8Array(randomBytes(200));
  const copy = data.slice();
  const a = keccak256Bytes(data);
  keccak256Bytes(new Uint8Array(randomBytes(300)));
  assert.deepEqual(keccak256Bytes(data), a);
  assert.equal(`0x${Buffer.from(a).toString('hex')}`, keccak256Hex(data));
  assert.deepEqual(data, copy);
  // Views into a larger buffer hash only their own bytes.
  const big = new Uint8Array(randomBytes(100));
  assert.equal(keccak256Hex(big.subarray(10, 50)), keccak256(big.slice(10, 50)));
});
