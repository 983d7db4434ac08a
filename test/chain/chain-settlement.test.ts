import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createWalletClient, http, parseSignature, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { listen, testApp } from '../helpers/app.ts';
import { deployTestUsdc, SETTLER_KEY, startLocalChain } from './evm.ts';
import { EIP3009_ABI } from '../../src/payments/settlers/chain.ts';
import { settlerFromConfig } from '../../src/payments/settlers/from-config.ts';
import { paymentPlaneFor } from '../../src/payments/plane.ts';
import { reconcilePayments } from '../../src/payments/reconcile.ts';
import { decodeXPayment } from '../../src/x402/x-payment.ts';
import { buy, buyerA, over, signFor, subscribeWith } from '../payments/buy.ts';

const PAY_TO = '0x00000000000000000000000000000000000000aa' as Address;

test('live chain settlement on a local EVM (chain id 8453): real transfer, replay refused on chain, one credit', async (t) => {
  const started = performance.now();
  const chain = await startLocalChain();
  t.after(() => chain.close());
  const { viemChain, pub, usdc, mint, balanceOf: balance } = await deployTestUsdc(chain);
  assert.equal(await pub.getChainId(), 8453);
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
    },
  });
  const settler = settlerFromConfig(e.config);
  assert.equal(settler.kind, 'chain');
  const { createApp } = await import('../../src/app.ts');
  const deps = { ...e.deps, settler };
  const f = over(await listen(t, createApp(deps).fetch));

  // 1. A real purchase moves 0.10 USDC from the buyer to PAY_TO; the settler only pays gas.
  const first = await buy(f, buyerA, 'nyc', 20, e.clock.now(), { expect: { usdc } });
  assert.equal(first.status, 200, JSON.stringify(first.body));
  assert.equal(first.body.idempotent, false);
  const receipt = await pub.getTransactionReceipt({ hash: first.body.txHash as Hex });
  assert.equal(receipt.status, 'success');
  assert.equal(receipt.to?.toLowerCase(), usdc.toLowerCase());
  assert.equal(await balance(PAY_TO), 100_000n);
  assert.equal(await balance(buyerA.address), 4_900_000n);

  // 2. The same X-Payment again: refused before the chain, answered idempotent, no second transfer.
  const blockBefore = await pub.getBlockNumber();
  const replay = await subscribeWith(f, first.payment.xPayment, 'nyc', 20);
  assert.equal(replay.status, 200);
  assert.equal(replay.body.idempotent, true);
  assert.equal(replay.body.txHash, first.body.txHash);
  assert.equal(await pub.getBlockNumber(), blockBefore);

  // 3. The token itself refuses the used nonce.
  const d = decodeXPayment(first.payment.xPayment);
  assert.ok(d.ok);
  const a = d.value.authorization;
  const { r, s, v } = parseSignature(d.value.signature);
  await assert.rejects(
    pub.simulateContract({
      account: privateKeyToAccount(SETTLER_KEY),
      address: usdc,
      abi: EIP3009_ABI,
      functionName: 'transferWithAuthorization',
      args: [a.from, a.to, a.value, a.validAfter, a.validBefore, a.nonce, Number(v), r, s],
    }),
    /authorization is used or canceled/,
  );

  // 4. The settler, handed an already-used authorization, resolves it to the earlier transaction.
  const resolved = await settler.settle({
    payer: buyerA.address,
    authorization: a,
    signature: d.value.signature,
    requirements: {} as never,
  });
  assert.deepEqual(resolved, { ok: true, txHash: first.body.txHash, alreadySettled: true });

  // 5. A crash after our transaction landed but before it was recorded: the claim is resolved
  //    from the chain at start and credited once; the client's retry is then idempotent.
  const second = await signFor(f, buyerA, 'nyc', 3, e.clock.now(), { expect: { usdc } });
  const s2 = parseSignature(second.signature);
  const a2 = second.authorization;
  const settlerWallet = createWalletClient({
    chain: viemChain,
    transport: http(chain.rpcUrl),
    account: privateKeyToAccount(SETTLER_KEY),
  });
  const landed = await settlerWallet.writeContract({
    address: usdc,
    abi: EIP3009_ABI,
    functionName: 'transferWithAuthorization',
    args: [a2.from, a2.to, a2.value, a2.validAfter, a2.validBefore, a2.nonce, Number(s2.v), s2.r, s2.s],
  });
  await pub.waitForTransactionReceipt({ hash: landed });
  e.db
    .prepare(
      `INSERT INTO payments (payer, nonce, city, count, amount_micro, settler, status, created_at, updated_at) VALUES (?, ?, 'nyc', 3, 15000, 'chain', 'claimed', 0, 0)`,
    )
    .run(buyerA.address.toLowerCase(), a2.nonce);
  const report = await reconcilePayments({ plane: paymentPlaneFor(deps), logger: e.logger });
  assert.deepEqual(report, { applied: 1, refunded: 0, failed: 0, pending: 0 });
  const retry = await subscribeWith(f, second.xPayment, 'nyc', 3);
  assert.equal(retry.status, 200);
  assert.equal(retry.body.idempotent, true);
  assert.equal(retry.body.txHash, landed);

  // Balances prove exactly one transfer per authorization, and the ceiling one credit each.
  assert.equal(await balance(PAY_TO), 115_000n);
  assert.equal(await balance(buyerA.address), 4_885_000n);
  assert.deepEqual(e.stores.entitlements.get(buyerA.address, 'nyc'), { paidThroughSeq: 23, totalPaidSignals: 23 });
  assert.equal(e.db.prepare(`SELECT count(*) FROM payments WHERE status = 'applied'`).pluck().get(), 2);
  t.diagnostic(
    `chain test took ${Math.round(performance.now() - started)} ms (EVM start, solc compile, deploy, 2 settlements)`,
  );
});
