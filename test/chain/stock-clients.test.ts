import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import type { Address, Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { base } from 'viem/chains';
import axios from 'axios';
import { wrapFetchWithPaymentFromConfig } from '@x402/fetch';
import { wrapAxiosWithPaymentFromConfig } from '@x402/axios';
import { ExactEvmScheme } from '@x402/evm';
import { wrap as faremeterWrap } from '@faremeter/fetch';
import { exact as faremeterExact } from '@faremeter/payment-evm';
import { wrapFetch as dexterWrapFetch } from '@dexterai/x402/client';
import { listen, testApp } from '../helpers/app.ts';
import { insertSignals } from '../helpers/signals.ts';
import { deployTestUsdc, startLocalChain } from './evm.ts';
import { startReferenceFront } from './reference-facilitators.ts';
import { EIP3009_ABI } from '../../src/payments/settlers/chain.ts';
import { settlerFromConfig } from '../../src/payments/settlers/from-config.ts';
import { paymentPlaneFor } from '../../src/payments/plane.ts';
import { MOCK_PAY_TO } from '../../src/payments/pay-to.ts';
import { BASE_USDC } from '../../packages/isocast-client/src/index.ts';
import { bundlePrice } from '../../packages/isocast-client/src/pricing.ts';

/**
 * Issue 36 item 4: stock x402 clients nobody here wrote, each used the way its own README shows,
 * with nothing of ours registered (no scheme, no hook), buy from a running isocast: POST
 * /v1/subscribe, an inline GET /v1/signals paying, and the same bundle again. In mock mode and
 * live through the reference facilitator (@x402/core + @x402/evm) on the local chain-8453 token;
 * live, the payee's balance on chain moves by exactly the price each time. The table (client x
 * case x mode: status, payee delta) is printed as a diagnostic; docs/discovery.md keeps it.
 */
type Row = { client: string; mode: 'mock' | 'live'; case: string; status: number; delta: bigint };
type Buyer = (url: string, method: 'GET' | 'POST') => Promise<number>;

/**
 * Each client, built from a wallet exactly as its README does, with its defaults: the local token
 * sits at Base's USDC address (usdcAtBase), so every client's own USDC table applies unchanged.
 */
type Wallet = { key: Hex; account: PrivateKeyAccount; rpcUrl: string };
const CLIENTS: Record<string, (w: Wallet) => Buyer> = {
  '@x402/fetch 2.27': ({ account }) => {
    const pay = wrapFetchWithPaymentFromConfig(fetch, {
      schemes: [{ network: 'eip155:8453', client: new ExactEvmScheme(account) }],
    });
    return async (url, method) => (await pay(url, { method })).status;
  },
  '@x402/axios 2.11': ({ account }) => {
    const api = wrapAxiosWithPaymentFromConfig(axios.create(), {
      schemes: [{ network: 'eip155:8453', client: new ExactEvmScheme(account) }],
    });
    return async (url, method) => {
      try {
        return (await api.request({ url, method })).status;
      } catch (err) {
        const status = (err as { response?: { status: number } }).response?.status;
        if (status === undefined) throw err;
        return status;
      }
    };
  },
  '@faremeter/fetch + payment-evm 0.22': ({ account }) => {
    // The wallet shape createPaymentHandler documents (chain, address, account).
    const wallet = { chain: base, address: account.address, account };
    const handler = faremeterExact.createPaymentHandler(wallet as never);
    const pay = faremeterWrap(fetch, { handlers: [handler] });
    return async (url, method) => (await pay(url, { method })).status;
  },
  // Its README's script form; `rpcUrls` (the README's override of Dexter's own RPC proxy) keeps
  // its balance lookups on the local chain.
  '@dexterai/x402 2.0': ({ key, rpcUrl }) => {
    const pay = dexterWrapFetch(fetch, { evmPrivateKey: key, rpcUrls: { 'eip155:8453': rpcUrl } });
    return async (url, method) => (await pay(url, { method })).status;
  },
};

/**
 * The test token's code at Base's USDC address on the local chain 8453: the EIP-712 domain is
 * built from the running address ("USD Coin", "2", 8453, BASE_USDC), balances are real.
 */
/** A live-mode isocast on a real port, settling through `facilitatorUrl`; `seed` gets 3 stored signals. */
async function liveApp(
  t: TestContext,
  o: { facilitatorUrl: string; rpcUrl: string; usdc: Address; payee: Address; seed?: string },
): Promise<{ base: string; db: ReturnType<typeof testApp>['db'] }> {
  const e = testApp(t, {
    nowMs: Date.now(),
    env: {
      PAYMENT_MODE: 'live',
      FEED: 'live',
      SETTLEMENT: 'facilitator',
      FACILITATOR_URL: o.facilitatorUrl,
      RPC_URL: o.rpcUrl,
      USDC_ADDRESS: o.usdc,
      PAY_TO: o.payee,
      OFAC_REQUIRED: 'false',
    },
  });
  if (o.seed) insertSignals(e.db, o.seed, 3);
  const settler = settlerFromConfig(e.config);
  t.after(() => settler.close?.());
  const deps = { ...e.deps, settler };
  const { createApp } = await import('../../src/app.ts');
  return { base: await listen(t, createApp({ ...deps, plane: paymentPlaneFor(deps) }).fetch), db: e.db };
}

async function usdcAtBase(chain: { request(m: string, p?: unknown[]): Promise<unknown> }, pub: any, deployed: Address) {
  await chain.request('hardhat_setCode', [BASE_USDC, await pub.getCode({ address: deployed })]);
  return BASE_USDC as Address;
}

async function runClients(
  mode: 'mock' | 'live',
  env: {
    base: string;
    rpcUrl: string;
    payee: Address;
    balance: (a: Address) => Promise<bigint>;
    fund: (a: Address) => Promise<void>;
  },
): Promise<Row[]> {
  const rows: Row[] = [];
  for (const [name, make] of Object.entries(CLIENTS)) {
    const key = generatePrivateKey();
    const account = privateKeyToAccount(key);
    await env.fund(account.address);
    const buy = make({ key, account, rpcUrl: env.rpcUrl });
    for (const [label, url, method, price] of [
      ['buy', `${env.base}/v1/subscribe?city=nyc&count=20`, 'POST', bundlePrice(20).totalMicro],
      ['inline read', `${env.base}/v1/signals?city=london&count=5`, 'GET', bundlePrice(5).totalMicro],
      ['buy again', `${env.base}/v1/subscribe?city=nyc&count=20`, 'POST', bundlePrice(20).totalMicro],
    ] as const) {
      const before = await env.balance(env.payee);
      const status = await buy(url, method);
      const delta = (await env.balance(env.payee)) - before;
      rows.push({ client: name, mode, case: label, status, delta });
      assert.equal(status, 200, `${name} ${label} (${mode})`);
      assert.equal(delta, mode === 'live' ? BigInt(price) : 0n, `${name} ${label} (${mode}): payee moved once`);
    }
  }
  return rows;
}

test('stock x402 clients buy, read inline and buy again: mock mode and live through the reference facilitator', async (t) => {
  const chain = await startLocalChain();
  t.after(() => chain.close());
  const { pub, deployer, abi, usdc: deployed } = await deployTestUsdc(chain);
  const usdc = await usdcAtBase(chain, pub, deployed);
  const balance = (who: Address) =>
    pub.readContract({ address: usdc, abi: EIP3009_ABI, functionName: 'balanceOf', args: [who] });
  const fund = async (who: Address) => {
    await pub.waitForTransactionReceipt({
      hash: await deployer.writeContract({ address: usdc, abi, functionName: 'mint', args: [who, 5_000_000n] }),
    });
  };
  const rows: Row[] = [];

  await t.test('mock', async (t) => {
    const e = testApp(t, { nowMs: Date.now() });
    insertSignals(e.db, 'london', 3);
    const base = await listen(t, e.app.fetch);
    rows.push(
      ...(await runClients('mock', { base, rpcUrl: chain.rpcUrl, payee: MOCK_PAY_TO as Address, balance, fund })),
    );
  });

  await t.test('live, reference facilitator (@x402/core + @x402/evm)', async (t) => {
    const front = await startReferenceFront('v2', chain.rpcUrl);
    t.after(() => front.close());
    const payee: Address = '0x00000000000000000000000000000000000000b6';
    const { base } = await liveApp(t, { facilitatorUrl: front.url, rpcUrl: chain.rpcUrl, usdc, payee, seed: 'london' });
    rows.push(...(await runClients('live', { base, rpcUrl: chain.rpcUrl, payee, balance, fund })));
  });

  t.diagnostic(
    [
      'client | mode | case | HTTP | payee delta (atomic USDC)',
      ...rows.map((r) => `${r.client} | ${r.mode} | ${r.case} | ${r.status} | +${r.delta}`),
    ].join('\n'),
  );
});

test('a random nonce used up on chain first buys nothing: no credit, payTo unchanged', async (t) => {
  const chain = await startLocalChain();
  t.after(() => chain.close());
  const { pub, deployer, abi, usdc: deployed } = await deployTestUsdc(chain);
  const usdc = await usdcAtBase(chain, pub, deployed);
  const attacker = privateKeyToAccount(generatePrivateKey());
  await pub.waitForTransactionReceipt({
    hash: await deployer.writeContract({
      address: usdc,
      abi,
      functionName: 'mint',
      args: [attacker.address, 5_000_000n],
    }),
  });
  const front = await startReferenceFront('v2', chain.rpcUrl);
  t.after(() => front.close());
  const payee: Address = '0x00000000000000000000000000000000000000b7';
  const { base, db } = await liveApp(t, { facilitatorUrl: front.url, rpcUrl: chain.rpcUrl, usdc, payee });

  // The attacker's stock header for nyc, 20 (random nonce), never sent until its nonce is burnt.
  let header: string | undefined;
  const capture: typeof fetch = async (input, init) => {
    const req = new Request(input, init);
    header = req.headers.get('payment-signature') ?? undefined;
    if (header) return new Response('{}', { status: 599 });
    return fetch(req);
  };
  const pay = wrapFetchWithPaymentFromConfig(capture, {
    schemes: [{ network: 'eip155:8453', client: new ExactEvmScheme(attacker) }],
  });
  await pay(`${base}/v1/subscribe?city=nyc&count=20`, { method: 'POST' });
  assert.ok(header);
  const signed = JSON.parse(Buffer.from(header, 'base64').toString()).payload.authorization;

  // The same nonce, signed again to the attacker's own other wallet, for 1 atomic unit: used first.
  const sink = privateKeyToAccount(generatePrivateKey()).address;
  const burn = {
    from: attacker.address,
    to: sink,
    value: 1n,
    validAfter: 0n,
    validBefore: BigInt(signed.validBefore),
    nonce: signed.nonce as Hex,
  };
  const sig = await attacker.signTypedData({
    domain: { name: 'USD Coin', version: '2', chainId: 8453, verifyingContract: usdc },
    types: {
      TransferWithAuthorization: [
        { name: 'from', type: 'address' },
        { name: 'to', type: 'address' },
        { name: 'value', type: 'uint256' },
        { name: 'validAfter', type: 'uint256' },
        { name: 'validBefore', type: 'uint256' },
        { name: 'nonce', type: 'bytes32' },
      ],
    },
    primaryType: 'TransferWithAuthorization',
    message: burn,
  });
  await pub.waitForTransactionReceipt({
    hash: await deployer.writeContract({
      address: usdc,
      abi: EIP3009_ABI,
      functionName: 'transferWithAuthorization',
      args: [burn.from, burn.to, burn.value, burn.validAfter, burn.validBefore, burn.nonce, sig],
    } as never),
  });
  const balance = () => pub.readContract({ address: usdc, abi: EIP3009_ABI, functionName: 'balanceOf', args: [payee] });
  const before = await balance();
  const res = await fetch(`${base}/v1/subscribe?city=nyc&count=20`, {
    method: 'POST',
    headers: { 'payment-signature': header },
  });
  const body = (await res.json()) as Record<string, unknown>;
  t.diagnostic(`burnt nonce presented: ${res.status} ${JSON.stringify({ ...body, disclaimer: undefined })}`);
  assert.equal((await balance()) - before, 0n, 'payTo unchanged');
  assert.notEqual(res.status, 200, 'no credit');
  assert.equal(db.prepare('SELECT count(*) FROM entitlements').pluck().get(), 0, 'no entitlement');
});
