import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Address, PublicClient } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { listen, testApp } from '../helpers/app.ts';
import { deployTestUsdc, SETTLER_KEY, startLocalChain } from './evm.ts';
import { startReferenceFront } from './reference-facilitators.ts';
import { spendNonce, type SpendVariant } from './spend-nonce.ts';
import { settlerFromConfig } from '../../src/payments/settlers/from-config.ts';
import { paymentPlaneFor } from '../../src/payments/plane.ts';
import { reconcilePayments } from '../../src/payments/reconcile.ts';
import { PAYMENT_ERRORS } from '../../src/lib/api-errors.ts';
import { bundlePrice } from '../../packages/isocast-client/src/pricing.ts';
import { buy, over, signFor, subscribeWith } from '../payments/buy.ts';

/**
 * Issue 35 item 1: a nonce used up on chain is not a payment. The attacker takes the 402, burns
 * the binding nonce without paying (cancelAuthorization, or a value-0 transferWithAuthorization
 * to itself), then sends a correctly signed X-Payment with that nonce. Through our own chain
 * settler and through the reference facilitators: 402 "not charged", no credit, PAY_TO's balance
 * unchanged; the reconciler gives a claimed row with such a nonce the same verdict; an honest
 * purchase still credits with PAY_TO +price.
 */
const PAY_TO = '0x00000000000000000000000000000000000000b5' as Address;

test('a nonce burnt on chain (cancelled, or spent on a value-0 self transfer) buys nothing', async (t) => {
  const chain = await startLocalChain();
  t.after(() => chain.close());
  const deployed = await deployTestUsdc(chain);
  const { usdc, mint, balanceOf: balance } = deployed;
  const pub = deployed.pub as PublicClient;

  for (const route of ['chain', 'v2', 'legacy'] as const) {
    await t.test(`through the ${route === 'chain' ? 'chain settler' : `${route} reference facilitator`}`, async (t) => {
      const front = route === 'chain' ? null : await startReferenceFront(route, chain.rpcUrl);
      t.after(() => front?.close());
      const e = testApp(t, {
        nowMs: Date.now(),
        env: {
          PAYMENT_MODE: 'live',
          FEED: 'live',
          RPC_URL: chain.rpcUrl,
          USDC_ADDRESS: usdc,
          PAY_TO,
          OFAC_REQUIRED: 'false',
          ...(front
            ? { SETTLEMENT: 'facilitator', FACILITATOR_URL: front.url }
            : { SETTLEMENT: 'chain', SETTLER_PRIVATE_KEY: SETTLER_KEY }),
        },
      });
      const settler = settlerFromConfig(e.config);
      t.after(() => settler.close?.());
      const deps = { ...e.deps, settler };
      const plane = paymentPlaneFor(deps);
      const { createApp } = await import('../../src/app.ts');
      const f = over(await listen(t, createApp({ ...deps, plane }).fetch));
      const expect = { expect: { usdc } };

      for (const variant of ['cancel', 'self'] as SpendVariant[]) {
        const attacker = privateKeyToAccount(generatePrivateKey());
        const p = await signFor(f, attacker, 'nyc', 20, Date.now(), expect);
        await spendNonce({ rpcUrl: chain.rpcUrl, pub, usdc, payer: attacker, nonce: p.authorization.nonce, variant });
        const before = await balance(PAY_TO);
        const r = await subscribeWith(f, p.xPayment, 'nyc', 20);
        assert.equal(r.status, 402, `${variant}: ${JSON.stringify(r.body)}`);
        assert.equal(r.body.error, PAYMENT_ERRORS.settle);
        assert.match(String(r.body.reason), variant === 'cancel' ? /cancel/ : /did not pay/);
        assert.equal(r.body.receiptToken, undefined);
        assert.equal(await balance(PAY_TO), before, `${variant}: PAY_TO unchanged`);
        assert.equal(e.stores.entitlements.get(attacker.address, 'nyc'), null, `${variant}: no credit`);
        // The same header again: the recorded "not charged" answer, never a credit.
        const again = await subscribeWith(f, p.xPayment, 'nyc', 20);
        assert.equal(again.status, 402);
        assert.equal(e.stores.entitlements.get(attacker.address, 'nyc'), null);
      }

      // The reconciler: a claim cut off before settling, whose nonce the buyer then cancelled.
      const cut = privateKeyToAccount(generatePrivateKey());
      const c = await signFor(f, cut, 'london', 3, Date.now(), expect);
      e.db
        .prepare(
          `INSERT INTO payments (payer, nonce, city, count, amount_micro, settler, status, created_at, updated_at) VALUES (?, ?, 'london', 3, ?, ?, 'claimed', ?, ?)`,
        )
        .run(
          cut.address.toLowerCase(),
          c.authorization.nonce,
          bundlePrice(3).totalMicro,
          settler.kind,
          Date.now(),
          Date.now(),
        );
      await spendNonce({
        rpcUrl: chain.rpcUrl,
        pub,
        usdc,
        payer: cut,
        nonce: c.authorization.nonce,
        variant: 'cancel',
      });
      assert.deepEqual(await reconcilePayments({ plane, logger: e.logger }), {
        applied: 0,
        refunded: 0,
        failed: 1,
        pending: 0,
      });
      assert.equal(e.stores.entitlements.get(cut.address, 'london'), null);

      // An honest buyer still pays and is credited: PAY_TO +price.
      const honest = privateKeyToAccount(generatePrivateKey());
      await mint(honest.address, 1_000_000n);
      const before = await balance(PAY_TO);
      const ok = await buy(f, honest, 'nyc', 20, Date.now(), expect);
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      assert.equal(ok.body.idempotent, false);
      assert.equal((await balance(PAY_TO)) - before, BigInt(bundlePrice(20).totalMicro));
      assert.equal(e.stores.entitlements.get(honest.address, 'nyc')?.totalPaidSignals, 20);
    });
  }
});
