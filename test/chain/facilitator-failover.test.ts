import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createPublicClient, http, type Address } from 'viem';
import { listen, testApp } from '../helpers/app.ts';
import { deployTestUsdc, startLocalChain } from './evm.ts';
import { startReferenceFront, type ReferenceFront } from './reference-facilitators.ts';
import { chainFor, createProofReader } from '../../src/payments/settlers/chain-proof.ts';
import { settlerFromConfig } from '../../src/payments/settlers/from-config.ts';
import { createFacilitatorSettler } from '../../src/payments/settlers/facilitator.ts';
import type { FailoverSettler } from '../../src/payments/settlers/failover.ts';
import { paymentPlaneFor } from '../../src/payments/plane.ts';
import { decodeXPayment } from '../../src/x402/x-payment.ts';
import { bundlePrice } from '../../packages/isocast-client/src/pricing.ts';
import { buyerA, buyerB, over, signFor, subscribeWith } from '../payments/buy.ts';

/**
 * Issue 36 item 3, the drill: FACILITATOR_URL lists two reference facilitators (@x402/core +
 * @x402/evm first, the legacy x402 1.2 second), the first is killed between purchases and later
 * restarted at the same address. Every purchase succeeds and moves the price exactly once on
 * chain. The figures (purchases, facilitator calls, money moved, latency per phase) are printed.
 */
const PAYEE: Address = '0x00000000000000000000000000000000000000c4';
const CITIES = ['nyc', 'london', 'paris', 'tokyo', 'miami'];

async function chainWithToken(t: { after(fn: () => Promise<void>): void }) {
  const chain = await startLocalChain();
  t.after(() => chain.close());
  const { usdc, mint, balanceOf } = await deployTestUsdc(chain);
  for (const who of [buyerA, buyerB]) await mint(who.address, 50_000_000n);
  const balance = () => balanceOf(PAYEE);
  return { chain, usdc, balance };
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};

test('failover drill: the first of two facilitators killed between purchases, then restarted; every purchase succeeds, each moves money once', async (t) => {
  const { chain, usdc, balance } = await chainWithToken(t);
  let first: ReferenceFront = await startReferenceFront('v2', chain.rpcUrl);
  const second = await startReferenceFront('legacy', chain.rpcUrl);
  t.after(() => Promise.all([first.close(), second.close()]).then(() => {}));
  const port = Number(new URL(first.url).port);
  let nowMs = Date.now();
  const e = testApp(t, {
    nowMs,
    env: {
      PAYMENT_MODE: 'live',
      FEED: 'live',
      SETTLEMENT: 'facilitator',
      FACILITATOR_URL: `${first.url},${second.url}`,
      RPC_URL: chain.rpcUrl,
      USDC_ADDRESS: usdc,
      PAY_TO: PAYEE,
      OFAC_REQUIRED: 'false',
    },
  });
  const settler = settlerFromConfig(e.config, { logger: e.logger, now: () => nowMs }) as FailoverSettler;
  t.after(() => settler.close?.());
  assert.equal(typeof settler.health, 'function', 'two URLs make a failover settler');
  const deps = { ...e.deps, settler };
  const { createApp } = await import('../../src/app.ts');
  const f = over(await listen(t, createApp({ ...deps, plane: paymentPlaneFor(deps) }).fetch));

  type Phase = 'both up' | 'first killed' | 'first down (cool-off)' | 'first restarted';
  const figures: Record<Phase, { ms: number[]; moved: bigint; n: number }> = {
    'both up': { ms: [], moved: 0n, n: 0 },
    'first killed': { ms: [], moved: 0n, n: 0 },
    'first down (cool-off)': { ms: [], moved: 0n, n: 0 },
    'first restarted': { ms: [], moved: 0n, n: 0 },
  };
  let i = 0;
  const purchase = async (phase: Phase) => {
    const city = CITIES[i++ % CITIES.length]!;
    const p = await signFor(f, i % 2 ? buyerA : buyerB, city, 2, Date.now(), { expect: { usdc } });
    const before = await balance();
    const started = performance.now();
    const r = await subscribeWith(f, p.xPayment, city, 2);
    const ms = performance.now() - started;
    assert.equal(r.status, 200, `${phase}: ${JSON.stringify(r.body)}`);
    assert.equal(r.body.idempotent, false);
    const moved = (await balance()) - before;
    assert.equal(moved, BigInt(bundlePrice(2).totalMicro), `${phase}: the price moved exactly once`);
    figures[phase].ms.push(ms);
    figures[phase].moved += moved;
    figures[phase].n++;
  };

  for (let k = 0; k < 5; k++) await purchase('both up');
  const calls0 = [first.calls.length, second.calls.length];
  assert.equal(calls0[1], 0, 'the second is not asked while the first answers');

  await first.close();
  await purchase('first killed');
  assert.equal(settler.health()[0]!.up, false);
  assert.match(settler.health()[0]!.reason ?? '', /unreachable/);
  for (let k = 0; k < 4; k++) await purchase('first down (cool-off)');
  const warnings = e.logger.lines.filter((l) => l.includes('facilitator unavailable; the next one is asked'));
  assert.equal(warnings.length, 1, 'one warning, not one per request');

  first = await startReferenceFront('v2', chain.rpcUrl, { port });
  nowMs += 30_000; // the cool-off
  const secondCallsBefore = second.calls.length;
  for (let k = 0; k < 5; k++) await purchase('first restarted');
  assert.equal(second.calls.length, secondCallsBefore, 'the restarted first takes the payments again');
  assert.equal(settler.health()[0]!.up, true);
  assert.equal(e.db.prepare(`SELECT count(*) FROM payments WHERE status = 'applied'`).pluck().get(), 15);

  const lines = (Object.entries(figures) as [Phase, (typeof figures)[Phase]][]).map(
    ([phase, x]) =>
      `${phase} | ${x.n} | +${x.moved} | p50 ${pct(x.ms, 50).toFixed(1)} ms | p99 ${pct(x.ms, 99).toFixed(1)} ms`,
  );
  t.diagnostic(['phase | purchases | payee delta | latency p50 | p99', ...lines].join('\n'));
  t.diagnostic(
    `facilitator calls: first ${calls0[0]} before the kill, ${first.calls.length} after its restart; second ${second.calls.length} (${second.calls.join(' ')})`,
  );
  t.diagnostic(`health: ${JSON.stringify(settler.health())}`);
});

test('a second facilitator cannot move money twice for one authorization', async (t) => {
  const { chain, usdc, balance } = await chainWithToken(t);
  const a = await startReferenceFront('v2', chain.rpcUrl);
  const b = await startReferenceFront('legacy', chain.rpcUrl);
  t.after(() => Promise.all([a.close(), b.close()]).then(() => {}));
  const e = testApp(t, {
    nowMs: Date.now(),
    env: {
      PAYMENT_MODE: 'live',
      FEED: 'live',
      FACILITATOR_URL: a.url,
      RPC_URL: chain.rpcUrl,
      USDC_ADDRESS: usdc,
      PAY_TO: PAYEE,
      OFAC_REQUIRED: 'false',
    },
  });
  const f = over(await listen(t, e.app.fetch));
  const p = await signFor(f, buyerA, 'nyc', 20, Date.now(), { expect: { usdc } });
  const d = decodeXPayment(p.xPayment);
  assert.ok(d.ok);
  const lookup = createProofReader({ rpcUrl: chain.rpcUrl, usdc });
  const req = {
    payer: buyerA.address,
    authorization: d.value.authorization,
    signature: d.value.signature,
    requirements: {
      scheme: 'exact' as const,
      network: 'base',
      maxAmountRequired: String(bundlePrice(20).totalMicro),
      resource: 'http://127.0.0.1:8402/v1/subscribe?city=nyc&count=20',
      description: 'x',
      mimeType: 'application/json',
      payTo: PAYEE,
      maxTimeoutSeconds: 300,
      asset: usdc,
      extra: { name: 'USD Coin', version: '2' },
    },
    signatureRecovered: true,
    fresh: true,
  };
  const before = await balance();
  const viaA = createFacilitatorSettler({ url: a.url, status: lookup.status });
  const viaB = createFacilitatorSettler({ url: b.url, status: lookup.status });
  t.after(() => {
    viaA.close?.();
    viaB.close?.();
  });
  const one = await viaA.settle(req);
  assert.equal(one.ok, true, JSON.stringify(one));
  const two = await viaB.settle(req);
  t.diagnostic(`the same authorization at the second facilitator: ${JSON.stringify(two)}`);
  // The token takes an authorization once: whatever the second answers, the payee gained the
  // price once. (Our own flow never asks a second one: the claimed row answers the retry.)
  assert.equal((await balance()) - before, BigInt(bundlePrice(20).totalMicro));
  if (two.ok && two.txHash && one.ok && two.txHash !== one.txHash) {
    const receipt = await createPublicClient({ chain: chainFor(chain.rpcUrl), transport: http(chain.rpcUrl) })
      .getTransactionReceipt({ hash: two.txHash })
      .catch(() => null);
    t.diagnostic(`the second's transaction ${two.txHash}: ${receipt?.status ?? 'no receipt'}`);
  }
});
