import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createWalletClient, http, parseSignature, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { listen, testApp } from '../helpers/app.ts';
import { DEPLOYER_KEY, deployTestUsdc, SETTLER_KEY, startLocalChain, type LocalChain } from './evm.ts';
import { EIP3009_ABI } from '../../src/payments/settlers/chain.ts';
import { createProofReader } from '../../src/payments/settlers/chain-proof.ts';
import { createFacilitatorSettler } from '../../src/payments/settlers/facilitator.ts';
import { settlerFromConfig } from '../../src/payments/settlers/from-config.ts';
import type { Settler } from '../../src/payments/settlers/settler.ts';
import { paymentPlaneFor } from '../../src/payments/plane.ts';
import { reconcilePayments } from '../../src/payments/reconcile.ts';
import { PAYMENT_ERRORS } from '../../src/lib/api-errors.ts';
import { decodeXPayment } from '../../src/x402/x-payment.ts';
import { buy, buyerA, over, subscribeWith } from '../payments/buy.ts';

/**
 * In-doubt settlements against a real EVM (hardhat, chain id 8453) and the EIP-3009 test token:
 * a competitor that uses the authorization first, a facilitator whose transfer lands after it
 * went quiet, and an authorization that never lands and expires. The token contract's word is
 * the only thing that moves a payment out of doubt.
 */
const PAY_TO = '0x00000000000000000000000000000000000000aa' as Address;
const COMPETITOR_KEY = DEPLOYER_KEY;

type Env = Awaited<ReturnType<typeof setupChain>>;

async function setupChain(
  t: Parameters<typeof testApp>[0],
  hook?: (method: string, env: { chain: LocalChain }) => Promise<void>,
) {
  const holder: { chain?: LocalChain } = {};
  const chain = await startLocalChain({
    beforeRequest: hook ? (m) => hook(m, holder as { chain: LocalChain }) : undefined,
  });
  holder.chain = chain;
  t.after(() => chain.close());
  const { viemChain, pub, usdc, mint, balanceOf: balance } = await deployTestUsdc(chain);
  await mint(buyerA.address, 5_000_000n);
  /** Submits an X-Payment's authorization as someone else would (a competitor, a facilitator). */
  async function submit(xPayment: string, key: Hex = COMPETITOR_KEY): Promise<Hex> {
    const d = decodeXPayment(xPayment);
    assert.ok(d.ok);
    const a = d.value.authorization;
    const { r, s, v } = parseSignature(d.value.signature);
    const w = createWalletClient({
      chain: viemChain,
      transport: http(chain.rpcUrl),
      account: privateKeyToAccount(key),
    });
    return w.writeContract({
      address: usdc,
      abi: EIP3009_ABI,
      functionName: 'transferWithAuthorization',
      args: [a.from, a.to, a.value, a.validAfter, a.validBefore, a.nonce, Number(v), r, s],
      gas: 200_000n,
    });
  }
  return { chain, pub, usdc, balance, submit, viemChain };
}

async function appWith(t: Parameters<typeof testApp>[0], c: Env, env: Record<string, string>, settler?: Settler) {
  const e = testApp(t, {
    nowMs: Date.now(),
    env: {
      PAYMENT_MODE: 'live',
      FEED: 'live',
      RPC_URL: c.chain.rpcUrl,
      USDC_ADDRESS: c.usdc,
      PAY_TO,
      OFAC_REQUIRED: 'false',
      ...env,
    },
  });
  const deps = { ...e.deps, settler: settler ?? settlerFromConfig(e.config) };
  const { createApp } = await import('../../src/app.ts');
  const plane = paymentPlaneFor(deps);
  const f = over(await listen(t, createApp({ ...deps, plane }).fetch));
  return { e, f, plane, reconcile: () => reconcilePayments({ plane, logger: e.logger }) };
}

test('a competitor uses the same authorization first: our submission reverts, the payment is applied once with their transaction', async (t) => {
  let competitorTx: Hex | null = null;
  let armed = true;
  let pending: string | null = null;
  let c!: Env;
  c = await setupChain(t, async (method) => {
    // Our settler's raw transaction is about to reach the chain: the competitor's lands first.
    if (method !== 'eth_sendRawTransaction' || !armed || !pending) return;
    armed = false;
    competitorTx = await c.submit(pending);
    await c.pub.waitForTransactionReceipt({ hash: competitorTx });
  });
  const { e, f } = await appWith(t, c, { SETTLEMENT: 'chain', SETTLER_PRIVATE_KEY: SETTLER_KEY });
  const { signFor } = await import('../payments/buy.ts');
  const p = await signFor(f, buyerA, 'nyc', 20, e.clock.now(), { expect: { usdc: c.usdc } });
  pending = p.xPayment;
  const r = await subscribeWith(f, p.xPayment, 'nyc', 20);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.ok(competitorTx);
  assert.equal(r.body.txHash, (competitorTx as string).toLowerCase());
  // Our own transaction was mined and reverted: the settler's account sent exactly one.
  const settler = privateKeyToAccount(SETTLER_KEY).address;
  assert.equal(await c.pub.getTransactionCount({ address: settler }), 1);
  const block = await c.pub.getBlock({ blockTag: 'latest', includeTransactions: true });
  const ours = block.transactions.find((x) => typeof x !== 'string' && x.from.toLowerCase() === settler.toLowerCase());
  assert.ok(ours && typeof ours !== 'string');
  assert.equal((await c.pub.getTransactionReceipt({ hash: ours.hash })).status, 'reverted');
  // One transfer, one credit; the replay is idempotent and carries no token.
  assert.equal(await c.balance(PAY_TO), 100_000n);
  assert.deepEqual(e.stores.entitlements.get(buyerA.address, 'nyc'), { paidThroughSeq: 20, totalPaidSignals: 20 });
  const replay = await subscribeWith(f, p.xPayment, 'nyc', 20);
  assert.equal(replay.body.idempotent, true);
  assert.equal(replay.body.receiptToken, undefined);
  assert.deepEqual(e.stores.entitlements.get(buyerA.address, 'nyc'), { paidThroughSeq: 20, totalPaidSignals: 20 });
});

/** A facilitator whose /settle submits the transfer (or not) and then never answers. */
async function quietFacilitator(t: Parameters<typeof testApp>[0], onSettle: (xPaymentJson: unknown) => Promise<void>) {
  const held = new Set<import('node:http').ServerResponse>();
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const ch of req) chunks.push(ch as Buffer);
    if (req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ kinds: [{ x402Version: 1, scheme: 'exact', network: 'base' }] }));
    }
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    if (req.url === '/verify') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ isValid: true, payer: body.paymentPayload.payload.authorization.from }));
    }
    held.add(res);
    await onSettle(body.paymentPayload);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  t.after(
    () =>
      new Promise<void>((r) => {
        for (const res of held) res.destroy();
        server.closeAllConnections();
        server.close(() => r());
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

test('a facilitator that submits on chain and then times out: in doubt (503), then the reconciler credits it once', async (t) => {
  const c = await setupChain(t);
  let submitted: Hex | null = null;
  const url = await quietFacilitator(t, async (payload) => {
    // Submitted but not yet mined when our /settle call gives up.
    await c.chain.request('evm_setAutomine', [false]);
    submitted = await c.submit(Buffer.from(JSON.stringify(payload)).toString('base64'));
  });
  const status = createProofReader({ rpcUrl: c.chain.rpcUrl, usdc: c.usdc }).status;
  const settler = createFacilitatorSettler({ url, settleTimeoutMs: 1_500, status });
  const { e, f, reconcile } = await appWith(t, c, { SETTLEMENT: 'facilitator', FACILITATOR_URL: url }, settler);
  const r = await buy(f, buyerA, 'nyc', 20, e.clock.now(), { expect: { usdc: c.usdc } });
  assert.equal(r.status, 503, JSON.stringify(r.body));
  assert.equal(r.body.error, PAYMENT_ERRORS.pending);
  assert.ok(r.res.headers.get('retry-after'));
  assert.equal(e.db.prepare('SELECT status FROM payments').pluck().get(), 'in_doubt');
  assert.ok(submitted);
  assert.deepEqual(await reconcile(), { applied: 0, refunded: 0, failed: 0, pending: 1 });

  await c.chain.request('evm_mine');
  await c.chain.request('evm_setAutomine', [true]);
  assert.deepEqual(await reconcile(), { applied: 1, refunded: 0, failed: 0, pending: 0 });
  assert.deepEqual(await reconcile(), { applied: 0, refunded: 0, failed: 0, pending: 0 });
  assert.deepEqual(e.db.prepare('SELECT status, tx_hash FROM payments').get(), {
    status: 'applied',
    tx_hash: (submitted as string).toLowerCase(),
  });
  assert.equal(await c.balance(PAY_TO), 100_000n);
  assert.deepEqual(e.stores.entitlements.get(buyerA.address, 'nyc'), { paidThroughSeq: 20, totalPaidSignals: 20 });
  // The buyer's retry now reads the final state: credited once, no second settle, no token.
  const retry = await subscribeWith(f, r.payment.xPayment, 'nyc', 20);
  assert.equal(retry.status, 200);
  assert.equal(retry.body.idempotent, true);
  assert.equal(retry.body.receiptToken, undefined);
  assert.deepEqual(e.stores.entitlements.get(buyerA.address, 'nyc'), { paidThroughSeq: 20, totalPaidSignals: 20 });
});

test('an authorization that never landed: in doubt while it could still land, failed (not charged) once the chain is past validBefore', async (t) => {
  const c = await setupChain(t);
  const url = await quietFacilitator(t, async () => {});
  const status = createProofReader({ rpcUrl: c.chain.rpcUrl, usdc: c.usdc }).status;
  const settler = createFacilitatorSettler({ url, settleTimeoutMs: 300, status });
  const { e, f, reconcile } = await appWith(t, c, { SETTLEMENT: 'facilitator', FACILITATOR_URL: url }, settler);
  const r = await buy(f, buyerA, 'nyc', 20, e.clock.now(), { expect: { usdc: c.usdc } });
  assert.equal(r.status, 503);
  assert.deepEqual(await reconcile(), { applied: 0, refunded: 0, failed: 0, pending: 1 });
  assert.equal(e.db.prepare('SELECT status FROM payments').pluck().get(), 'in_doubt');

  await c.chain.request('evm_increaseTime', [MAX_LIFETIME]);
  await c.chain.request('evm_mine');
  assert.deepEqual(await reconcile(), { applied: 0, refunded: 0, failed: 1, pending: 0 });
  assert.deepEqual(e.db.prepare('SELECT status, error FROM payments').get(), {
    status: 'failed',
    error: 'authorization expired unused on chain; not charged',
  });
  assert.equal(await c.balance(PAY_TO), 0n);
  const retry = await subscribeWith(f, r.payment.xPayment, 'nyc', 20);
  assert.equal(retry.status, 402);
  assert.equal(retry.body.error, PAYMENT_ERRORS.settle);
  assert.equal(e.stores.entitlements.get(buyerA.address, 'nyc'), null);
});

const MAX_LIFETIME = 1_000;
