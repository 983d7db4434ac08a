import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { loadConfig } from '../../src/config.ts';
import { openDb } from '../../src/db/open.ts';
import { runDoctor } from '../../src/ops/doctor.ts';
import { listen, tempDir } from '../helpers/app.ts';
import { startFakeChain } from '../fakes/chain-rpc.ts';

/** Live mode resolves in-doubt settlements through RPC_URL: doctor checks it speaks JSON-RPC for Base. */
test('doctor: live mode defaults RPC_URL to the public Base endpoint and checks eth_chainId is 8453', async (t) => {
  const dir = tempDir(t);
  const live = {
    DATA_DIR: dir,
    PAYMENT_MODE: 'live',
    FEED: 'live',
    PAY_TO: '0x00000000000000000000000000000000000000aa',
    FACILITATOR_URL: 'http://127.0.0.1:9',
    OFAC_REQUIRED: 'false',
    GAMMA_URL: 'http://127.0.0.1:9',
    CLOB_URL: 'http://127.0.0.1:9',
    METAR_URL: 'http://127.0.0.1:9',
  };
  assert.equal(loadConfig(live).RPC_URL, 'https://mainnet.base.org');
  assert.equal(loadConfig({ DATA_DIR: dir }).RPC_URL, undefined, 'mock mode needs none');
  assert.equal(loadConfig(live).RECONCILE_INTERVAL_MS, 30_000);
  assert.equal(loadConfig({ ...live, RECONCILE_INTERVAL_MS: '5000' }).RECONCILE_INTERVAL_MS, 5_000);

  const chain = await startFakeChain();
  t.after(() => chain.close());
  // A JSON-RPC node of another chain (id 1).
  const otherChain = await listen(t, async (req) => {
    const { id } = (await req.json()) as { id: number };
    return Response.json({ jsonrpc: '2.0', id, result: '0x1' });
  });
  const run = async (rpcUrl: string) => {
    const config = loadConfig({ ...live, RPC_URL: rpcUrl });
    const checks = await runDoctor({
      config,
      openDb: () => openDb(join(dir, 'isocast.db')),
      dbPath: join(dir, 'isocast.db'),
    });
    return checks.find((c) => c.name === 'rpc')!;
  };
  const ok = await run(chain.url);
  assert.equal(ok.status, 'ok');
  assert.match(ok.detail, /eth_chainId 8453 \(Base\)/);
  const wrong = await run(otherChain);
  assert.equal(wrong.status, 'fail');
  assert.match(wrong.detail, /expected 8453/);
  const down = await run('http://127.0.0.1:9');
  assert.equal(down.status, 'fail');
  assert.match(down.detail, /in-doubt settlements cannot be resolved/);
});
