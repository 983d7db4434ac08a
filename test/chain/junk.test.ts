import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { listen, testApp } from '../helpers/app.ts';
import { deployTestUsdc, SETTLER_KEY, startLocalChain } from './evm.ts';
import { settlerFromConfig } from '../../src/payments/settlers/from-config.ts';
import { paymentPlaneFor } from '../../src/payments/plane.ts';
import { reconcilePayments } from '../../src/payments/reconcile.ts';
import { PAYMENT_ERRORS } from '../../src/lib/api-errors.ts';
import { buy, buyerA, over } from '../payments/buy.ts';

/**
 * Issue 23 item 6: an authorization from an unfunded wallet, settled by the chain settler against
 * a real EVM (hardhat, chain id 8453) and the EIP-3009 test token. Nothing can move, so nothing is
 * sent: a definite 402 "not charged" with the reason, a failed row, a few RPC calls, and nothing
 * left for the reconciler.
 */
const PAY_TO = '0x00000000000000000000000000000000000000aa' as Address;

test('junk from unfunded wallets is refused "not charged" before anything is sent, in 3 RPC calls each; a real payment still settles', async (t) => {
  const calls: string[] = [];
  const chain = await startLocalChain({
    beforeRequest: async (method) => {
      calls.push(method);
    },
  });
  t.after(() => chain.close());
  const { usdc, mint, balanceOf } = await deployTestUsdc(chain);
  await mint(buyerA.address, 5_000_000n);
  const e = testApp(t, {
    nowMs: Date.now(),
    env: {
      PAYMENT_MODE: 'live',
      FEED: 'live',
      SETTLEMENT: 'chain',
      RPC_URL: chain.rpcUrl,
      SETTLER_PRIVATE_KEY: SETTLER_KEY,
      USDC_ADDRESS: usdc,
      PAY_TO,
      OFAC_REQUIRED: 'false',
      RATE_LIMIT_ADDRESS_PER_MIN: '0',
      RATE_LIMIT_WALLET_PER_MIN: '0',
    },
  });
  const deps = { ...e.deps, settler: settlerFromConfig(e.config) };
  const { createApp } = await import('../../src/app.ts');
  const plane = paymentPlaneFor(deps);
  const f = over(await listen(t, createApp({ ...deps, plane }).fetch));

  const JUNK = 20;
  calls.length = 0;
  for (let i = 0; i < JUNK; i++) {
    const junk = privateKeyToAccount(generatePrivateKey());
    const r = await buy(f, junk, 'nyc', 20, e.clock.now(), { expect: { usdc } });
    assert.equal(r.status, 402, JSON.stringify(r.body));
    assert.equal(r.body.error, PAYMENT_ERRORS.settle);
    assert.equal(r.body.reason, 'payer balance 0 USDC is below the 0.1 USDC authorized');
  }
  const perJunk = calls.length / JUNK;
  t.diagnostic(`${JUNK} junk payments: ${calls.length} RPC calls (${perJunk} each): ${[...new Set(calls)].join(', ')}`);
  assert.equal(perJunk, 3, 'block, authorizationState and balanceOf');
  assert.ok(!calls.includes('eth_sendRawTransaction') && !calls.includes('eth_estimateGas'));
  assert.deepEqual(
    e.db.prepare('SELECT status, count(*) AS n FROM payments GROUP BY status').all(),
    [{ status: 'failed', n: JUNK }],
    'every junk row is failed at once, none in doubt',
  );
  calls.length = 0;
  assert.deepEqual(await reconcilePayments({ plane, logger: e.logger }), {
    applied: 0,
    refunded: 0,
    failed: 0,
    pending: 0,
  });
  assert.equal(calls.length, 0, 'nothing left for the reconciler to ask the chain');

  // A funded buyer is unaffected: the preflight passes and the transfer lands.
  const real = await buy(f, buyerA, 'nyc', 20, e.clock.now(), { expect: { usdc } });
  assert.equal(real.status, 200, JSON.stringify(real.body));
  assert.equal(await balanceOf(PAY_TO), 100_000n);
  assert.deepEqual(e.stores.entitlements.get(buyerA.address, 'nyc'), { paidThroughSeq: 20, totalPaidSignals: 20 });
});
