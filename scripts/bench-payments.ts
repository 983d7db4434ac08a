/**
 * Payment-plane throughput against its floor: mock-mode subscribes per second (real signature
 * verification, binding check, (payer, nonce) claim, mock settle, entitlement + receipt
 * transaction, over real HTTP on 127.0.0.1) next to raw viem EIP-712 signature recoveries per
 * second on the same machine. Every subscribe needs one recovery, so the ratio says how much of
 * the per-request cost is the unavoidable cryptography.
 *
 * `inProcess*` repeats the subscribes through the app's fetch handler without sockets, which
 * separates the plane's own cost from HTTP (the load generator shares this process and core).
 *
 * Run: node scripts/bench-payments.ts [--n 2000] [--concurrency 16]
 * Prints one JSON line.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { recoverTypedDataAddress, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { createApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { MOCK_PAY_TO } from '../src/payments/pay-to.ts';
import { openDb } from '../src/db/open.ts';
import { createCatalog } from '../src/cities/catalog.ts';
import { systemClock } from '../src/lib/clock.ts';
import { createLogger } from '../src/lib/logger.ts';
import { loadSanctionsList } from '../src/sanctions/list.ts';
import { createMockSettler } from '../src/payments/settlers/mock.ts';
import { FIRST_STEP, currentSalt } from '../src/payments/binding.ts';
import { paymentRequired } from '../src/payments/envelope.ts';
import { authorizationTypedData } from '../src/x402/eip3009.ts';
import { payFor402 } from '../packages/isocast-client/src/index.ts';
import { createStores } from '../src/stores.ts';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
}
const N = arg('n', 2000);
const CONCURRENCY = arg('concurrency', 16);

const dir = mkdtempSync(join(tmpdir(), 'isocast-bench-'));
const config = loadConfig({ DATA_DIR: dir, BASE_URL: 'http://127.0.0.1:8402', LOG_LEVEL: 'error' });
const db = openDb(join(dir, 'isocast.db'));
const secret = Buffer.alloc(32, 0x42);
const catalog = createCatalog();
const app = createApp({
  config,
  db,
  stores: createStores(db),
  catalog,
  clock: systemClock,
  logger: createLogger({ level: 'error' }),
  sanctions: loadSanctionsList({}),
  secret,
  settler: createMockSettler(),
});

// Pre-sign N distinct purchases (one buyer, distinct (city, count) pairs give distinct nonces);
// signing is the client's cost and stays outside the timing.
const buyer = privateKeyToAccount(`0x${'c3'.repeat(32)}` as Hex);
const cities = catalog.active.map((c) => c.slug);
const nowMs = Date.now();
const jobs: { city: string; count: number; xPayment: string }[] = [];
for (let i = 0; i < 2 * N; i++) {
  const city = cities[i % cities.length]!;
  const count = 2 + Math.floor(i / cities.length);
  const body = paymentRequired({
    city,
    count,
    resource: `${config.BASE_URL}/v1/subscribe`,
    payTo: MOCK_PAY_TO as Address,
    usdc: config.USDC_ADDRESS as Address,
    // Each (city, count) is bought once here, so every bundle is still at its first step.
    salt: currentSalt(secret, { city, count, step: FIRST_STEP, nowMs }),
    termsUrl: config.TERMS_URL,
    mode: 'mock',
  });
  jobs.push({ city, count, xPayment: (await payFor402(body, buyer, { nowMs })).xPayment });
}

// Raw recoveries over the same kind of typed data the server verifies.
const inProcessJobs = jobs.splice(N);
const sample = jobs.slice(0, Math.min(N, 500)).map((j) => {
  const p = JSON.parse(Buffer.from(j.xPayment, 'base64').toString('utf8')).payload;
  const a = p.authorization;
  return {
    signature: p.signature as Hex,
    auth: {
      from: a.from,
      to: a.to,
      value: BigInt(a.value),
      validAfter: BigInt(a.validAfter),
      validBefore: BigInt(a.validBefore),
      nonce: a.nonce,
    },
  };
});
const server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 });
await new Promise<void>((r) => server.once('listening', () => r()));
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
const post = async (j: (typeof jobs)[number]) => {
  const res = await fetch(`${base}/v1/subscribe?city=${j.city}&count=${j.count}`, {
    method: 'POST',
    headers: { 'x-payment': j.xPayment },
  });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`subscribe answered ${res.status}`);
};
const direct = async (j: (typeof jobs)[number]) => {
  const res = await app.fetch(
    new Request(`http://bench/v1/subscribe?city=${j.city}&count=${j.count}`, {
      method: 'POST',
      headers: { 'x-payment': j.xPayment },
    }),
  );
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`subscribe answered ${res.status}`);
};
const recover = (i: number) => {
  const s = sample[i % sample.length]!;
  return recoverTypedDataAddress({
    ...authorizationTypedData(config.USDC_ADDRESS as Address, s.auth),
    signature: s.signature,
  });
};

// Warm-up: JIT, the HTTP path (replays, so no job is consumed twice), the SQLite page cache.
for (let i = 0; i < 50; i++) await recover(i);
await Promise.all(jobs.slice(0, CONCURRENCY).map(post));

// The three measurements run interleaved in small rounds, so load from anything else on the
// machine lands on all of them alike and the ratio stays meaningful.
const ROUND = 50;
const spent = { recover: 0, http: 0, direct: 0 };
const done = { recover: 0, http: 0, direct: 0 };
let h = CONCURRENCY;
let d = 0;
while (h < jobs.length || d < inProcessJobs.length) {
  let t0 = performance.now();
  for (let i = 0; i < ROUND; i++) await recover(done.recover + i);
  spent.recover += performance.now() - t0;
  done.recover += ROUND;

  const batch = jobs.slice(h, h + ROUND);
  h += batch.length;
  let k = 0;
  t0 = performance.now();
  await Promise.all(
    Array.from({ length: Math.min(CONCURRENCY, batch.length) }, async () => {
      while (k < batch.length) await post(batch[k++]!);
    }),
  );
  spent.http += performance.now() - t0;
  done.http += batch.length;

  const inBatch = inProcessJobs.slice(d, d + ROUND);
  d += inBatch.length;
  t0 = performance.now();
  for (const j of inBatch) await direct(j);
  spent.direct += performance.now() - t0;
  done.direct += inBatch.length;
}
const recoveriesPerSec = done.recover / (spent.recover / 1000);
const subscribesPerSec = done.http / (spent.http / 1000);
const inProcessPerSec = done.direct / (spent.direct / 1000);
const timed = done.http;
const applied = db.prepare(`SELECT count(*) FROM payments WHERE status = 'applied'`).pluck().get() as number;

await new Promise<void>((r) => server.close(() => r()));
db.close();
rmSync(dir, { recursive: true, force: true });
if (applied !== jobs.length + inProcessJobs.length)
  throw new Error(`expected ${jobs.length + inProcessJobs.length} applied payments, found ${applied}`);

process.stdout.write(
  JSON.stringify({
    bench: 'payments',
    subscribes: timed,
    concurrency: CONCURRENCY,
    subscribesPerSec: Math.round(subscribesPerSec),
    recoveriesPerSec: Math.round(recoveriesPerSec),
    ratio: Number((subscribesPerSec / recoveriesPerSec).toFixed(3)),
    inProcessSubscribesPerSec: Math.round(inProcessPerSec),
    inProcessRatio: Number((inProcessPerSec / recoveriesPerSec).toFixed(3)),
    node: process.version,
    cpus: cpus().length,
    cpu: cpus()[0]?.model,
  }) + '\n',
);
