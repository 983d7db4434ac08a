import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve } from '@hono/node-server';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import Database from 'better-sqlite3';
import { testApp } from '../helpers/app.ts';
import { createApp } from '../../src/app.ts';
import { paymentPlaneFor } from '../../src/payments/plane.ts';
import { createMockSettler } from '../../src/payments/settlers/mock.ts';
import type { Settler } from '../../src/payments/settlers/settler.ts';
import { createFacilitatorSettler } from '../../src/payments/settlers/facilitator.ts';
import { createChainSettler } from '../../src/payments/settlers/chain.ts';
import { createShutdown } from '../../src/ops/shutdown.ts';
import { memoryLogger } from '../helpers/logger.ts';
import { startFakeFacilitator } from '../fakes/facilitator.ts';
import { startFakeChain } from '../fakes/chain-rpc.ts';
import { startServer } from '../chaos/server.ts';
import { buyerA, over, signFor } from '../payments/buy.ts';

test("the shutdown deadline is longer than every settler's own timeouts", async () => {
  const fac = createFacilitatorSettler({ url: 'http://127.0.0.1:9' });
  const chain = createChainSettler({
    rpcUrl: 'http://127.0.0.1:9',
    privateKey: `0x${'11'.repeat(32)}`,
    usdc: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
  });
  assert.ok((await deadlineFor(fac.maxSettleMs)) > 10_000 + 30_000); // its /verify and /settle timeouts
  assert.ok((await deadlineFor(chain.maxSettleMs)) > 60_000); // its receipt wait
  assert.ok((await deadlineFor(chain.maxSettleMs)) > 10_000, 'longer than the old 10 s forced exit');
});

/** The deadline a shutdown logs at its start, for a settler's maxSettleMs (nothing in flight, so it ends at once). */
async function deadlineFor(maxSettleMs: number): Promise<number> {
  const logger = memoryLogger();
  const plane = { stopAccepting() {}, drain: async () => {}, inflightCount: () => 0, strandInflight: () => 0 };
  const server = { close: (done?: () => void) => done?.() };
  await createShutdown({ logger, server, plane, workers: [], closeDb() {}, maxSettleMs, exit() {} })('SIGTERM');
  return JSON.parse(logger.lines.find((l) => l.includes('shutting down'))!).deadlineMs;
}

test('shutdown with a hung settle: the listener closes first, the settle is waited for, then left in doubt at the deadline; workers then the database', async (t) => {
  let entered!: () => void;
  const inSettle = new Promise<void>((r) => {
    entered = r;
  });
  const hung: Settler = {
    ...createMockSettler(),
    maxSettleMs: 300,
    settle: () => {
      entered();
      return new Promise(() => {});
    },
  };
  const e = testApp(t, { deps: { settler: hung } });
  const plane = paymentPlaneFor({ ...e.deps, settler: hung });
  const server = serve({ fetch: createApp({ ...e.deps, plane }).fetch, hostname: '127.0.0.1', port: 0 }) as Server;
  await new Promise<void>((r) => server.once('listening', () => r()));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const f = over(base);
  const p = await signFor(f, buyerA, 'nyc', 2, e.clock.now());
  const purchase = fetch(`${base}/v1/subscribe?city=nyc&count=2`, {
    method: 'POST',
    headers: { 'x-payment': p.xPayment },
  }).catch((err) => err);
  await inSettle;

  const steps: string[] = [];
  let exitCode: number | null = null;
  const exited = new Promise<void>((resolve) => {
    const shutdown = createShutdown({
      logger: e.logger,
      server,
      plane,
      maxSettleMs: hung.maxSettleMs,
      marginMs: 200,
      workers: [
        {
          stop: () => {
            steps.push('reconciler');
          },
        },
        {
          stop: () => {
            steps.push('poller');
          },
        },
        {
          stop: () => {
            steps.push('worker');
          },
        },
      ],
      closeDb: () => steps.push('db'),
      exit: (code) => {
        exitCode = code;
        resolve();
      },
    });
    void shutdown('SIGTERM');
  });
  // No new connection is accepted while the settle runs, and no new purchase would start.
  await assert.rejects(fetch(`${base}/health`, { headers: { connection: 'close' } }));
  assert.equal(e.db.prepare('SELECT status FROM payments').pluck().get(), 'claimed');
  await exited;
  assert.equal(exitCode, 1);
  assert.deepEqual(steps, ['db'], 'at the deadline the database is closed without waiting for the hung settle');
  assert.deepEqual(e.db.prepare('SELECT status, error FROM payments').get(), {
    status: 'in_doubt',
    error: 'shutdown deadline passed mid-settle',
  });
  assert.ok(
    e.logger.lines.some(
      (l) => l.includes('settlement cut off by shutdown; in doubt') && l.includes(buyerA.address.toLowerCase()),
    ),
  );
  server.closeAllConnections();
  await purchase;
});

test('SIGTERM to a real server during a slow settle: the purchase completes, new connections are refused, clean exit, nothing in doubt', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'isocast-shutdown-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const chain = await startFakeChain();
  t.after(() => chain.close());
  const fac = await startFakeFacilitator('ok', { chain });
  t.after(() => fac.close());
  fac.delayMs = 0;
  const server = await startServer({
    dataDir,
    env: {
      PAYMENT_MODE: 'live',
      PAY_TO: '0x00000000000000000000000000000000000000aa',
      FACILITATOR_URL: fac.url,
      RPC_URL: chain.url,
      USDC_ADDRESS: chain.usdc,
      OFAC_REQUIRED: 'false',
      LOG_LEVEL: 'info',
      // Live payments refuse the simulated feed; the live feed points at a closed local port.
      FEED: 'live',
      GAMMA_URL: 'http://127.0.0.1:9',
      CLOB_URL: 'http://127.0.0.1:9',
      METAR_URL: 'http://127.0.0.1:9',
      POLL_INTERVAL_MS: '3600000',
    },
  });
  t.after(() => server.kill('SIGKILL'));
  const f = over(server.baseUrl);
  const p = await signFor(f, buyerA, 'nyc', 20, Date.now(), { expect: { usdc: chain.usdc } });
  // The facilitator holds /settle for 1.5 s: SIGTERM arrives in the middle of it.
  fac.delayMs = 1_500;
  const purchase = f(`/v1/subscribe?city=nyc&count=20`, {
    method: 'POST',
    headers: { 'x-payment': p.xPayment, connection: 'close' },
  });
  while (!fac.requests.some((q) => q.path === '/settle')) await new Promise((r) => setTimeout(r, 10));
  process.kill(server.pid, 'SIGTERM');
  await new Promise((r) => setTimeout(r, 300));
  await assert.rejects(fetch(`${server.baseUrl}/health`), 'the listener is closed while the settle finishes');
  const res = await purchase;
  assert.equal(res.status, 200);
  const body = (await res.json()) as Record<string, any>;
  assert.equal(body.idempotent, false);
  assert.match(body.receiptToken, /^isr_/);
  assert.equal(await server.exited, '0');
  const db = new Database(join(dataDir, 'isocast.db'), { readonly: true });
  t.after(() => db.close());
  assert.deepEqual(db.prepare('SELECT status FROM payments').pluck().all(), ['applied']);
  assert.equal(chain.used.size, 1);
  const log = readFileSync(join(dataDir, 'server.log'), 'utf8');
  assert.ok(log.indexOf('"shutting down"') < log.indexOf('"payment applied"'), 'applied after the signal');
  assert.ok(log.includes('"stopped"'));
});
