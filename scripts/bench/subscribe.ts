/**
 * Subscribe load client (a child process of scripts/bench.ts) against a real `serve` process in
 * mock mode, and its ceiling: raw signature recoveries per second in this process with the
 * server's own recovery code (src/payments/eip3009-recover.ts: WASM libsecp256k1, digest
 * included). Every subscribe needs exactly one recovery, so the ratio says how close the payment
 * plane runs to the cryptography it cannot skip. viem's `recoverTypedDataAddress` (the recovery
 * the server used before) is timed beside it for context.
 *
 * Before timing: one real 402 challenge per city (the binding salt comes from the server), then
 * `accounts x cities` distinct authorizations signed with payFor402 (@isocast/client) (distinct payers give
 * distinct nonces). Timed: rounds that alternate a burst of recoveries with a batch of concurrent
 * POST /v1/subscribe, so outside load lands on both alike. Every POST must answer 200, fresh.
 *
 * The POSTs go through scripts/bench/http-lite.ts (pre-built request bytes on keep-alive
 * sockets): with undici's `fetch` the client was the bottleneck and the server sat 75 % idle.
 * With the server's `pid`, each batch also reads the server's CPU (every thread, and the event
 * loop alone) from /proc, so the figure can be told apart from the client's speed:
 *   cpuRatio = recovery µs / server CPU µs per subscribe,
 * and bookkeepingUs = server CPU µs per subscribe - recovery µs (everything but the crypto). Each
 * round also sends as many `GET /health` through the same client: healthCpuUs is the server's
 * CPU per request that does nothing, the HTTP floor inside the bookkeeping. ratioAtViemRecovery
 * puts the same bookkeeping around viem's recovery (timed in the same rounds): viem µs / (viem µs
 * + bookkeeping µs), what "0.8" meant when the target was set.
 *
 * node scripts/bench/subscribe.ts '{"url":"http://127.0.0.1:8402","pid":123,"accounts":40,"concurrency":16,"rounds":6}'
 */
import { keccak256, recoverTypedDataAddress, toHex, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { payFor402 } from '../../packages/isocast-client/src/index.ts';
import { decodeXPayment } from '../../src/x402/x-payment.ts';
import { authorizationTypedData } from '../../src/x402/eip3009.ts';
import { recoverAuthorizationSigner } from '../../src/payments/eip3009-recover.ts';
import { LiteConnection, requestBytes } from './http-lite.ts';
import { cpuNs, median, spread } from './util.ts';

const input = JSON.parse(process.argv[2] ?? '{}') as {
  url: string;
  pid?: number;
  accounts?: number;
  concurrency?: number;
  rounds?: number;
  count?: number;
  /** Warm-up before the timed rounds, for the purchases and for each recovery alike. */
  warmupMs?: number;
};
const ACCOUNTS = input.accounts ?? 40;
const CONCURRENCY = input.concurrency ?? 16;
const ROUNDS = input.rounds ?? 6;
const COUNT = input.count ?? 20;
const WARMUP_MS = input.warmupMs ?? 1_000;

const cities = ((await (await fetch(`${input.url}/v1/cities`)).json()) as { cities: { slug: string }[] }).cities.map(
  (c) => c.slug,
);
const challenges = new Map<string, unknown>();
for (const city of cities) {
  const res = await fetch(`${input.url}/v1/subscribe?city=${city}&count=${COUNT}`, { method: 'POST' });
  if (res.status !== 402) throw new Error(`challenge for ${city}: ${res.status}`);
  challenges.set(city, await res.json());
}
type Job = { city: string; xPayment: string; bytes: Buffer };
const target = new URL(input.url);
const jobs: Job[] = [];
for (let a = 0; a < ACCOUNTS; a++) {
  const account = privateKeyToAccount(keccak256(toHex(`isocast-bench-buyer-${a}`)));
  for (const city of cities) {
    const xPayment = (await payFor402(challenges.get(city), account, { validForSeconds: 600 })).xPayment;
    const bytes = requestBytes(target.host, 'POST', `/v1/subscribe?city=${city}&count=${COUNT}`, {
      'x-payment': xPayment,
    });
    jobs.push({ city, xPayment, bytes });
  }
}

const samples = jobs.slice(0, 200).map((j) => {
  const d = decodeXPayment(j.xPayment);
  if (!d.ok) throw new Error(d.reason);
  const asset = assetOf(challenges.get(j.city));
  return {
    asset,
    auth: d.value.authorization,
    typed: authorizationTypedData(asset, d.value.authorization),
    signature: d.value.signature as Hex,
  };
});
function assetOf(challenge: unknown): Address {
  return (challenge as { accepts: { asset: Address }[] }).accepts[0]!.asset;
}
const recover = async (i: number) => {
  const s = samples[i % samples.length]!;
  if (!(await recoverAuthorizationSigner(s.asset, s.auth, s.signature))) throw new Error('sample did not recover');
};
const recoverViem = (i: number) => {
  const s = samples[i % samples.length]!;
  return recoverTypedDataAddress({ ...s.typed, signature: s.signature });
};

let failures = 0;
let firstFailure = '';
const lanes = Array.from({ length: CONCURRENCY }, () => new LiteConnection(Number(target.port), target.hostname));
const FRESH = Buffer.from('"idempotent":false');
const health: Job = { city: '', xPayment: '', bytes: requestBytes(target.host, 'GET', '/health', {}) };
const post = async (lane: LiteConnection, j: Job, expect: 'fresh' | 200) => {
  const res = await lane.send(j.bytes);
  if (res.status !== 200 || (expect === 'fresh' && !res.body.includes(FRESH))) {
    failures++;
    firstFailure ||= `${res.status} ${res.body.toString('utf8', 0, 300)}`;
  }
};
/** All of `batch` through the lanes, each lane one request at a time. */
async function drive(batch: Job[], expect: 'fresh' | 200 = 'fresh'): Promise<void> {
  let k = 0;
  await Promise.all(
    lanes.map(async (lane) => {
      while (k < batch.length) await post(lane, batch[k++]!, expect);
    }),
  );
}

// Warm-up: JIT on both sides, keep-alive connections open, the SQLite page cache, for WARMUP_MS
// each, as the read pairs warm up for a second. The server's payment path reaches its steady
// speed only after several hundred purchases: with 160 here, the first timed rounds of 340 ran
// at 440 and 372 µs of event loop per purchase against 323-334 for the later ones.
async function warm(fn: (i: number) => Promise<unknown>, ms: number): Promise<void> {
  const t0 = performance.now();
  for (let i = 0; performance.now() - t0 < ms; i++) await fn(i);
}
await warm(recover, WARMUP_MS);
await warm(recoverViem, WARMUP_MS / 4);
let next = 0;
const warmStart = performance.now();
// In steps of 10 per connection, leaving at least half of the jobs for the timed rounds.
while (performance.now() - warmStart < WARMUP_MS && next + CONCURRENCY * 10 <= jobs.length / 2) {
  await drive(jobs.slice(next, next + CONCURRENCY * 10));
  next += CONCURRENCY * 10;
}

const perRound = Math.floor((jobs.length - next) / ROUNDS);
type Round = {
  subscribesPerSec: number;
  recoveriesPerSec: number;
  viemRecoveriesPerSec: number;
  /** Server CPU per subscribe, every thread / the main thread alone (null without a pid). */
  serverCpuUs: number | null;
  serverMainThreadUs: number | null;
  /** Server CPU per `GET /health` through the same client: the HTTP floor any request pays. */
  healthCpuUs: number | null;
};
const rounds: Round[] = [];
for (let r = 0; r < ROUNDS; r++) {
  const recStart = performance.now();
  let recovered = 0;
  while (performance.now() - recStart < 1_000) await recover(recovered++);
  const recoveriesPerSec = recovered / ((performance.now() - recStart) / 1000);
  const viemStart = performance.now();
  let viemRecovered = 0;
  while (performance.now() - viemStart < 300) await recoverViem(viemRecovered++);
  const viemRecoveriesPerSec = viemRecovered / ((performance.now() - viemStart) / 1000);

  const batch = jobs.slice(next, next + perRound);
  next += batch.length;
  const cpu0 = input.pid ? [cpuNs(input.pid), cpuNs(input.pid, 'main')] : null;
  const t0 = performance.now();
  await drive(batch);
  const subscribesPerSec = batch.length / ((performance.now() - t0) / 1000);
  const perSub = (ns: number) => Math.round(ns / 1000 / batch.length);
  const serverCpuUs = cpu0 ? perSub(cpuNs(input.pid!) - cpu0[0]!) : null;
  const serverMainThreadUs = cpu0 ? perSub(cpuNs(input.pid!, 'main') - cpu0[1]!) : null;
  const h0 = input.pid ? cpuNs(input.pid) : 0;
  await drive(
    batch.map(() => health),
    200,
  );
  const healthCpuUs = input.pid ? perSub(cpuNs(input.pid) - h0) : null;
  rounds.push({
    subscribesPerSec,
    recoveriesPerSec,
    viemRecoveriesPerSec,
    serverCpuUs,
    serverMainThreadUs,
    healthCpuUs,
  });
}
for (const lane of lanes) lane.close();
if (failures > 0)
  throw new Error(`${failures} subscribes did not answer 200 with a fresh purchase; first: ${firstFailure}`);
const ratios = rounds.map((r) => r.subscribesPerSec / r.recoveriesPerSec);
const withCpu = rounds.filter((r) => r.serverCpuUs !== null);
const recoveryUs = rounds.map((r) => 1e6 / r.recoveriesPerSec);
const cpuRatios = withCpu.map((r) => 1e6 / r.recoveriesPerSec / r.serverCpuUs!);
const r1 = (x: number) => Math.round(x * 10) / 10;
process.stdout.write(
  JSON.stringify({
    subscribes: next,
    concurrency: CONCURRENCY,
    perRound,
    rounds,
    subscribesPerSec: median(rounds.map((r) => r.subscribesPerSec)),
    recoveriesPerSec: median(rounds.map((r) => r.recoveriesPerSec)),
    viemRecoveriesPerSec: median(rounds.map((r) => r.viemRecoveriesPerSec)),
    ratio: median(ratios),
    ratioSpread: spread(ratios),
    ...(withCpu.length
      ? {
          recoveryUs: r1(median(recoveryUs)),
          viemRecoveryUs: r1(median(rounds.map((r) => 1e6 / r.viemRecoveriesPerSec))),
          serverCpuUs: median(withCpu.map((r) => r.serverCpuUs!)),
          serverMainThreadUs: median(withCpu.map((r) => r.serverMainThreadUs!)),
          bookkeepingUs: Math.round(median(withCpu.map((r) => r.serverCpuUs! - 1e6 / r.recoveriesPerSec))),
          healthCpuUs: median(withCpu.map((r) => r.healthCpuUs!)),
          cpuRatio: Number(median(cpuRatios).toFixed(3)),
          // The target's first meaning (written when recovery was viem's 1,500-2,500 µs): the
          // same bookkeeping around a viem recovery, as a share of the whole.
          ratioAtViemRecovery: Number(
            median(
              withCpu.map((r) => {
                const viemUs = 1e6 / r.viemRecoveriesPerSec;
                return viemUs / (viemUs + r.serverCpuUs! - 1e6 / r.recoveriesPerSec);
              }),
            ).toFixed(3),
          ),
          cpuRatioSpread: Number(spread(cpuRatios).toFixed(2)),
        }
      : {}),
  }) + '\n',
);
