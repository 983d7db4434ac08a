import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PAYMENT_ERRORS } from '../../src/lib/api-errors.ts';

// The spec's section 7 strings, copied by hand: a change to the constants must fail here.
test('payment error strings are exactly the spec section 7 texts', () => {
  assert.deepEqual(PAYMENT_ERRORS, {
    verify: 'payment verification failed — you were not charged',
    binding: 'payment binding mismatch: nonce must bind (payer, city, count)',
    settle: 'settlement failed — you were not charged',
    sanctioned: 'wallet is sanctioned; payment refused',
    screening: 'sanctions screening unavailable',
    entitlement: 'entitlement update failed after payment',
    count: 'count must be an integer of at least 2',
    minSpend: 'minimum spend is 0.01 USDC',
    // Issue 12: the in-doubt answer (503), never "not charged" while money may have moved.
    pending: 'settlement pending — retry the same X-Payment; you will not be charged twice',
  });
});
