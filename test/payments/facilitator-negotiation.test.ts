import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { tempDir, testApp } from '../helpers/app.ts';
import { startFakeFacilitator, type FacilitatorMode } from '../fakes/facilitator.ts';
import { FAKE_USDC, startFakeChain } from '../fakes/chain-rpc.ts';
import { settlerFromConfig } from '../../src/payments/settlers/from-config.ts';
import { paymentBackends } from '../../src/payments/backends.ts';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { runDoctor } from '../../src/ops/doctor.ts';
import { PAYMENT_ERRORS } from '../../src/lib/api-errors.ts';
import { buy, buyerA, challenge, inApp } from './buy.ts';
import { createStores } from '../../src/stores.ts';

/**
 * Issue 24, items 1 and 2: the facilitator is sent the (x402Version, scheme, network) its
 * /supported lists, and a refusal is answered "not charged" at once, for one RPC call at most.
 * The settler is the one live mode builds (settlerFromConfig), against a fake facilitator that
 * parses each version with @x402/core's published schemas and a fake chain that counts RPC calls.
 */
const PAY_TO = '0x00000000000000000000000000000000000000aa';

async function setup(t: Parameters<typeof testApp>[0], mode: FacilitatorMode, supported?: unknown) {
  const chain = await startFakeChain();
  t.after(() => chain.close());
  const fac = await startFakeFacilitator(mode, { chain });
  t.after(() => fac.close());
  if (supported) fac.supported = supported;
  const env = {
    PAYMENT_MODE: 'live',
    FEED: 'live',
    PAY_TO,
    FACILITATOR_URL: fac.url,
    RPC_URL: chain.url,
    USDC_ADDRESS: FAKE_USDC,
    OFAC_REQUIRED: 'false',
  };
  const settler = settlerFromConfig(loadConfig({ DATA_DIR: '/nonexistent', ...env }));
  t.after(() => settler.close?.());
  const e = testApp(t, { env, deps: { settler } });
  const f = inApp(e.app);
  const purchase = (city = 'nyc', count = 20) =>
    buy(f, buyerA, city, count, e.clock.now(), { expect: { usdc: FAKE_USDC } });
  return { ...e, fac, chain, f, purchase, env };
}

const V2_AND_V1 = {
  kinds: [
    { x402Version: 2, scheme: 'exact', network: 'eip155:8453' },
    { x402Version: 1, scheme: 'exact', network: 'base' },
  ],
  extensions: [],
  signers: {},
};

test('a facilitator listing v2 eip155:8453 is sent x402 v2: accepted requirements with amount, resource, the same authorization', async (t) => {
  const { fac, purchase } = await setup(t, 'ok', V2_AND_V1);
  const r = await purchase();
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal(fac.supportedCalls, 1);
  const [q] = fac.requests;
  assert.equal(q!.path, '/settle');
  const { x402Version, paymentPayload: p, paymentRequirements: req } = q!.body;
  assert.equal(x402Version, 2);
  assert.equal(p.x402Version, 2);
  assert.deepEqual(req, {
    scheme: 'exact',
    network: 'eip155:8453',
    amount: '100000',
    asset: FAKE_USDC,
    payTo: PAY_TO,
    maxTimeoutSeconds: 300,
    extra: { name: 'USD Coin', version: '2' },
  });
  assert.deepEqual(p.accepted, req);
  assert.equal(p.resource.url, 'http://127.0.0.1:8402/v1/subscribe?city=nyc&count=20');
  assert.equal(p.payload.authorization.nonce, r.payment.nonce);
  assert.deepEqual(Object.keys(p.payload).sort(), ['authorization', 'signature']);
  assert.equal((req as Record<string, unknown>).maxAmountRequired, undefined);
});

test('a v1-only facilitator is sent v1 with the legacy name "base" in payload and requirements; the buyer still sees eip155:8453', async (t) => {
  const { fac, f, purchase } = await setup(t, 'ok');
  const offered = (await challenge(f, 'nyc', 2)) as { accepts: { network: string }[] };
  assert.equal(offered.accepts[0]!.network, 'eip155:8453');
  const r = await purchase('nyc', 2);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  const body = fac.requests[0]!.body;
  assert.equal(body.x402Version, 1);
  assert.equal(body.paymentPayload.network, 'base');
  assert.equal(body.paymentRequirements.network, 'base');
  assert.equal(body.paymentRequirements.maxAmountRequired, '10000');
  // Cached: the second purchase reads /supported no more.
  assert.equal((await purchase('miami', 2)).status, 200);
  assert.equal(fac.supportedCalls, 1);
});

test('a refusal that names the network re-reads /supported; the next payment goes out in what it now lists', async (t) => {
  const { fac, purchase } = await setup(t, 'settle-fails');
  fac.failReason = 'invalid_exact_evm_network_mismatch';
  const refused = await purchase('nyc', 2);
  assert.equal(refused.status, 402);
  assert.equal(refused.body.reason, 'facilitator settlement failed: invalid_exact_evm_network_mismatch');
  fac.supported = V2_AND_V1;
  fac.mode = 'ok';
  // Another bundle: the same one within the minute would carry the same nonce (binding.ts).
  const r = await purchase('london', 2);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal(fac.supportedCalls, 2);
  assert.deepEqual(
    fac.requests.map((q) => q.body.x402Version),
    [1, 2],
  );
  // A refusal that says nothing about the kind (no funds) does not make us poll.
  fac.mode = 'settle-fails';
  fac.failReason = 'insufficient_funds';
  assert.equal((await purchase('miami', 2)).status, 402);
  assert.equal(fac.supportedCalls, 2);
});

test('a 4xx from /settle naming no transaction is a refusal: 402 not charged at once with its reason, failed, one RPC call', async (t) => {
  const { fac, chain, db, purchase } = await setup(t, 'settle-400');
  const started = performance.now();
  const r = await purchase('nyc', 2);
  assert.equal(r.status, 402, JSON.stringify(r.body));
  assert.equal(r.body.error, PAYMENT_ERRORS.settle);
  assert.equal(
    r.body.reason,
    'facilitator refused /settle (HTTP 400): Invalid request: ZodError: [{"code":"invalid_enum_value","path":["network"]}]',
  );
  assert.ok(performance.now() - started < 2_000, 'answered at once, not after a timeout');
  assert.deepEqual(db.prepare('SELECT status FROM payments').pluck().all(), ['failed']);
  assert.equal(createStores(db).entitlements.get(buyerA.address, 'nyc'), null);
  assert.deepEqual(Object.fromEntries(chain.calls), { eth_call: 1 }, 'authorizationState once, nothing else');
  assert.equal(fac.chain.size, 0);
});

test('a 4xx that names a transaction is not a refusal: the chain decides (here: used, credited once)', async (t) => {
  const { fac, db, purchase } = await setup(t, 'settle-then-400-naming-tx');
  const r = await purchase('nyc', 2);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal(r.body.txHash, fac.chain.get(`${buyerA.address.toLowerCase()}:${r.payment.nonce}`));
  assert.deepEqual(db.prepare('SELECT status FROM payments').pluck().all(), ['applied']);
  assert.deepEqual(createStores(db).entitlements.get(buyerA.address, 'nyc'), {
    paidThroughSeq: 2,
    totalPaidSignals: 2,
  });
});

test('a refusal while the RPC is down: in doubt (503), since a prior use of the authorization cannot be ruled out', async (t) => {
  const { chain, db, purchase } = await setup(t, 'settle-fails');
  chain.down = true;
  const r = await purchase('nyc', 2);
  assert.equal(r.status, 503, JSON.stringify(r.body));
  assert.deepEqual(db.prepare('SELECT status FROM payments').pluck().all(), ['in_doubt']);
});

test('a facilitator listing neither kind: doctor fails it and serve start refuses with one config line', async (t) => {
  const fac = await startFakeFacilitator('ok');
  t.after(() => fac.close());
  fac.supported = { kinds: [{ x402Version: 2, scheme: 'exact', network: 'eip155:84532' }] };
  const config = loadConfig({
    DATA_DIR: '/nonexistent',
    PAYMENT_MODE: 'live',
    FEED: 'live',
    PAY_TO,
    FACILITATOR_URL: fac.url,
    OFAC_REQUIRED: 'false',
    RPC_URL: 'http://127.0.0.1:9',
    GAMMA_URL: 'http://127.0.0.1:9',
    CLOB_URL: 'http://127.0.0.1:9',
    METAR_URL: 'http://127.0.0.1:9',
  });
  await assert.rejects(paymentBackends(config), (err: unknown) => {
    assert.ok(err instanceof ConfigError);
    assert.deepEqual(err.problems, [
      `FACILITATOR_URL: ${fac.url} lists neither v2 exact eip155:8453 nor v1 exact base (it lists: v2 exact eip155:84532)`,
    ]);
    return true;
  });
  const checks = await runDoctor({
    config,
    openDb: () => {
      throw new Error('no database in this test');
    },
    dbPath: '/nonexistent/isocast.db',
  });
  const check = checks.find((c) => c.name === 'facilitator')!;
  assert.equal(check.status, 'fail');
  assert.match(check.detail, /lists neither v2 exact eip155:8453 nor v1 exact base .*serve refuses to start$/);
  assert.equal(checks.filter((c) => c.name === 'facilitator').length, 1);

  fac.supported = V2_AND_V1;
  const ok = (await runDoctor({ config, openDb: () => ({}) as never, dbPath: '/nonexistent/x.db' })).find(
    (c) => c.name === 'facilitator',
  )!;
  assert.equal(ok.status, 'ok');
  assert.match(ok.detail, /sends v2 exact eip155:8453 \(lists v2 exact eip155:8453, v1 exact base\)$/);
});

test('serve refuses to start against a facilitator listing neither kind: exit 2, one config line', async (t) => {
  const fac = await startFakeFacilitator('ok');
  t.after(() => fac.close());
  fac.supported = { kinds: [{ x402Version: 1, scheme: 'exact', network: 'base-sepolia' }] };
  const dir = tempDir(t);
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env))
    if (v !== undefined && !/^(OFAC_|ISOCAST|ADMIN)/.test(k)) env[k] = v;
  const child = spawn(process.execPath, ['src/main.ts', 'serve'], {
    env: {
      ...env,
      PAYMENT_MODE: 'live',
      FEED: 'live',
      PAY_TO: `0x${'1'.repeat(40)}`,
      FACILITATOR_URL: fac.url,
      OFAC_REQUIRED: 'false',
      DATA_DIR: join(dir, 'data'),
      PORT: '0',
      LOG_LEVEL: 'error',
      RPC_URL: 'http://127.0.0.1:9',
      GAMMA_URL: 'http://127.0.0.1:9',
      CLOB_URL: 'http://127.0.0.1:9',
      METAR_URL: 'http://127.0.0.1:9',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  t.after(() => child.kill('SIGKILL'));
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    stderr += d;
  });
  const code = await new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
  assert.equal(code, 2, stderr);
  assert.deepEqual(stderr.trim().split('\n'), [
    `config: FACILITATOR_URL: ${fac.url} lists neither v2 exact eip155:8453 nor v1 exact base (it lists: v1 exact base-sepolia)`,
  ]);
});
