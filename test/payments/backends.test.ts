import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../src/config.ts';
import { paymentBackends } from '../../src/payments/backends.ts';

const LIVE = {
  PAYMENT_MODE: 'live',
  FEED: 'live',
  OFAC_REQUIRED: 'false',
  PAY_TO: '0x1111111111111111111111111111111111111111',
  FACILITATOR_URL: 'http://127.0.0.1:9',
  RPC_URL: 'http://127.0.0.1:9',
};

test('mock mode: the mock settler and no chain verifier, without the live settlers', async () => {
  const b = await paymentBackends(loadConfig({ PAYMENT_MODE: 'mock' }));
  assert.equal(b.settler.kind, 'mock');
  assert.equal(b.chainVerifier, undefined);
});

test('live mode: the configured settler and the on-chain verifier', async () => {
  const facilitator = await paymentBackends(loadConfig(LIVE));
  assert.equal(facilitator.settler.kind, 'facilitator');
  assert.equal(typeof facilitator.chainVerifier?.verifyTypedData, 'function');
  const chain = await paymentBackends(
    loadConfig({
      ...LIVE,
      SETTLEMENT: 'chain',
      SETTLER_PRIVATE_KEY: '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d',
    }),
  );
  assert.equal(chain.settler.kind, 'chain');
});
