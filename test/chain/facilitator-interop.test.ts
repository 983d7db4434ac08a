import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseAbi } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { listen, testApp } from '../helpers/app.ts';
import { deployTestUsdc, startLocalChain } from './evm.ts';
import { startReferenceFront, type ReferenceFront } from './reference-facilitators.ts';
import { EIP3009_ABI } from '../../src/payments/settlers/chain.ts';
import { settlerFromConfig } from '../../src/payments/settlers/from-config.ts';
import { paymentPlaneFor } from '../../src/payments/plane.ts';
import { reconcilePayments } from '../../src/payments/reconcile.ts';
import { PAYMENT_ERRORS } from '../../src/lib/api-errors.ts';
import { decodeXPayment } from '../../src/x402/x-payment.ts';
import { bundlePrice } from '../../packages/isocast-client/src/pricing.ts';
import { buyerA, buyerB, over, signFor, subscribeWith } from '../payments/buy.ts';

/**
 * Issue 24 item 3: live mode settling through the two reference facilitators nobody here wrote
 * (reference-facilitators.ts), on the local chain-8453 EIP-3009 token ("USD Coin", "2"). Each
 * case is asserted on chain: the payee's balance moved exactly once, and the authorization's
 * state. The table of outcomes is printed as a test diagnostic.
 */
const PAYEES = {
  v2: '0x00000000000000000000000000000000000000a1',
  legacy: '0x00000000000000000000000000000000000000a2',
} as const;

type Row = { facilitator: string; case: string; status: number; delta: bigint; used: boolean };

test('reference facilitators (@x402/core 2.27 + @x402/evm, legacy x402 1.2) settle live purchases on a local chain 8453', async (t) => {
  const started = performance.now();
  const chain = await startLocalChain();
  t.after(() => chain.close());
  const { pub, usdc, mint, balanceOf: balance } = await deployTestUsdc(chain);
  // One buyer per facilitator: a nonce binds (payer, city, count), so two buyers never share one.
  for (const who of [buyerA, buyerB]) await mint(who.address, 5_000_000n);
  // The domain the buyer signs under and the facilitators verify against (ERC-5267).
  const domain = await pub.readContract({
    address: usdc,
    abi: parseAbi([
      'function eip712Domain() view returns (bytes1, string, string, uint256, address, bytes32, uint256[])',
    ]),
    functionName: 'eip712Domain',
  });
  assert.deepEqual([domain[1], domain[2], domain[3]], ['USD Coin', '2', 8453n]);

  const used = (xPayment: string) => {
    const d = decodeXPayment(xPayment);
    assert.ok(d.ok);
    return pub.readContract({
      address: usdc,
      abi: EIP3009_ABI,
      functionName: 'authorizationState',
      args: [d.value.authorization.from, d.value.authorization.nonce],
    });
  };
  const rows: Row[] = [];

  for (const name of ['v2', 'legacy'] as const) {
    await t.test(name, async (t) => {
      const front: ReferenceFront = await startReferenceFront(name, chain.rpcUrl);
      t.after(() => front.close());
      const payee = PAYEES[name];
      const buyer = name === 'v2' ? buyerA : buyerB;
      const e = testApp(t, {
        nowMs: Date.now(),
        env: {
          PAYMENT_MODE: 'live',
          FEED: 'live',
          SETTLEMENT: 'facilitator',
          FACILITATOR_URL: front.url,
          RPC_URL: chain.rpcUrl,
          USDC_ADDRESS: usdc,
          PAY_TO: payee,
          OFAC_REQUIRED: 'false',
        },
      });
      const settler = settlerFromConfig(e.config);
      t.after(() => settler.close?.());
      const negotiated = await settler.supported!();
      assert.ok(negotiated.ok);
      assert.deepEqual(
        negotiated.kind,
        name === 'v2'
          ? { x402Version: 2, scheme: 'exact', network: 'eip155:8453' }
          : { x402Version: 1, scheme: 'exact', network: 'base' },
      );
      const deps = { ...e.deps, settler };
      const plane = paymentPlaneFor(deps);
      const { createApp } = await import('../../src/app.ts');
      const f = over(await listen(t, createApp({ ...deps, plane }).fetch));
      const reconcile = () => reconcilePayments({ plane, logger: e.logger });
      const now = () => Date.now();
      const expect = { expect: { usdc } };
      /** Runs one case; returns the payee's balance delta over it. */
      const step = async (label: string, xPayment: string, run: () => Promise<number>) => {
        const before = await balance(payee);
        const status = await run();
        const delta = (await balance(payee)) - before;
        rows.push({ facilitator: name, case: label, status, delta, used: await used(xPayment) });
        return delta;
      };

      // 1. Subscribe: one transfer of the bundle price, a receipt token.
      const first = await signFor(f, buyer, 'nyc', 20, now(), expect);
      const dFirst = await step('subscribe', first.xPayment, async () => {
        const r = await subscribeWith(f, first.xPayment, 'nyc', 20);
        assert.equal(r.status, 200, JSON.stringify(r.body));
        assert.equal(r.body.idempotent, false);
        assert.ok(r.body.receiptToken);
        return r.status;
      });
      assert.equal(dFirst, BigInt(bundlePrice(20).totalMicro));
      assert.equal(await used(first.xPayment), true);

      // 2. Inline read: /v1/signals with X-Payment settles and reads in one request.
      const inline = await signFor(f, buyer, 'london', 5, now(), expect);
      const dInline = await step('inline read', inline.xPayment, async () => {
        const res = await f('/v1/signals?city=london&count=5&since=0', { headers: { 'x-payment': inline.xPayment } });
        assert.equal(res.status, 200, await res.clone().text());
        assert.ok(res.headers.get('x-payment-response'));
        return res.status;
      });
      assert.equal(dInline, BigInt(bundlePrice(5).totalMicro));

      // 3. Replay of the same payment: answered from our record, the facilitator never asked again.
      const settles = front.calls.length;
      const dReplay = await step('replay', first.xPayment, async () => {
        const r = await subscribeWith(f, first.xPayment, 'nyc', 20);
        assert.equal(r.body.idempotent, true);
        assert.equal(r.body.receiptToken, undefined);
        return r.status;
      });
      assert.equal(dReplay, 0n);
      assert.equal(front.calls.length, settles);

      // 4. A payer with no funds: the facilitator refuses; 402 "not charged" with its reason, at once.
      const broke = privateKeyToAccount(generatePrivateKey());
      const poor = await signFor(f, broke, 'nyc', 2, now(), expect);
      const dPoor = await step('zero balance', poor.xPayment, async () => {
        const startedAt = performance.now();
        const r = await subscribeWith(f, poor.xPayment, 'nyc', 2);
        assert.equal(r.status, 402, JSON.stringify(r.body));
        assert.equal(r.body.error, PAYMENT_ERRORS.settle);
        assert.match(r.body.reason, /^facilitator settlement failed: \S+/);
        assert.ok(performance.now() - startedAt < 10_000);
        t.diagnostic(`${name} zero balance reason: ${r.body.reason}`);
        return r.status;
      });
      assert.equal(dPoor, 0n);
      assert.equal(await used(poor.xPayment), false);
      assert.equal(
        e.db.prepare('SELECT status FROM payments WHERE payer = ?').pluck().get(broke.address.toLowerCase()),
        'failed',
      );

      // 5. The facilitator dies right after broadcasting: 503 pending, then the reconciler credits
      //    the transfer once, from the chain, when its block is mined.
      const killed = await signFor(f, buyer, 'miami', 2, now(), expect);
      await chain.request('evm_setAutomine', [false]);
      front.killAfterBroadcast = true;
      const before5 = await balance(payee);
      const r5 = await subscribeWith(f, killed.xPayment, 'miami', 2);
      assert.equal(r5.status, 503, JSON.stringify(r5.body));
      assert.equal(r5.body.error, PAYMENT_ERRORS.pending);
      assert.equal(await used(killed.xPayment), false, 'still in the mempool');
      assert.deepEqual(await reconcile(), { applied: 0, refunded: 0, failed: 0, pending: 1 });
      await chain.request('evm_mine');
      await chain.request('evm_setAutomine', [true]);
      // The dead facilitator's own receipt wait ends once the block is mined (else it would poll a
      // closed chain until its timeout and hold the test process open).
      await front.idle();
      assert.deepEqual(await reconcile(), { applied: 1, refunded: 0, failed: 0, pending: 0 });
      assert.deepEqual(await reconcile(), { applied: 0, refunded: 0, failed: 0, pending: 0 });
      const retry = await subscribeWith(f, killed.xPayment, 'miami', 2);
      assert.equal(retry.status, 200);
      assert.equal(retry.body.idempotent, true);
      const d5 = (await balance(payee)) - before5;
      assert.equal(d5, BigInt(bundlePrice(2).totalMicro));
      assert.equal(await used(killed.xPayment), true);
      rows.push({ facilitator: name, case: 'killed after broadcast', status: r5.status, delta: d5, used: true });
      assert.equal(
        e.db.prepare(`SELECT count(*) FROM payments WHERE status = 'applied'`).pluck().get(),
        3,
        'subscribe, inline read and the killed one: each applied once',
      );
    });
  }

  const line = (r: Row) =>
    `${r.facilitator.padEnd(7)} | ${r.case.padEnd(23)} | ${String(r.status).padEnd(3)} | +${r.delta} | ${r.used ? 'used' : 'unused'}`;
  t.diagnostic(
    ['facilitator | case | HTTP | payee delta (atomic USDC) | authorizationState', ...rows.map(line)].join('\n'),
  );
  t.diagnostic(`interop took ${Math.round(performance.now() - started)} ms`);
});
