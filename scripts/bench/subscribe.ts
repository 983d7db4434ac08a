/**
 * Subscribe load client (a child process of scripts/bench.ts) against a real `serve` process in
 * mock mode, and its ceiling: raw signature recoveries per second in this process with the
 * server's own recovery code (src/payments/eip3009-recover.ts: WASM libsecp256k1, digest
 * included). Every subscribe needs exactly one recovery, so the ratio says how close the payment
 * plane runs to the cryptography it cannot skip. viem's `recoverTypedDataAddress` (the recovery
 * the server used before) is timed beside it for context.
 *
 * Before timing: one real 402 challenge per city (the binding salt comes from the server), then
 * `accounts x cities` distinct authorizations signed with src/buyer/pay.ts (distinct payers give
 * distinct nonces). Timed: rounds that alternate a burst of recoveries with a batch of concurrent
 * POST /v1/subscribe, so outside load lands on both alike. Every POST must answer 200, fresh.
 *
 * node scripts/bench/subscribe.ts '{"url":"http://127.0.0.1:8402","accounts":40,"concurrency":16,"rounds":6}'
 */
import { keccak256, recoverTypedDataAddress, toHex, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { payFor402, decodeXPayment } from '../../src/buyer/pay.ts';
import { authorizationTypedData } from '../../src/payments/eip3009.ts';
import { recoverAuthorizationSigner } from '../../src/payments/eip3009-recover.ts';
import { median, spread } from './util.ts';

const input = JSON.parse(process.argv[2] ?? '{}') as {
  url: string;
  accounts?: number;
  concurrency?: number;
  rounds?: number;
  count?: number;
};
const ACCOUNTS = input.accounts ?? 40;
const CONCURRENCY = input.concurrency ?? 16;
const ROUNDS = input.rounds ?? 6;
const COUNT = input.count ?? 20;

const cities = ((await (await fetch(`${input.url}/v1/cities`)).json()) as { cities: { slug: string }[] }).cities.map(
  (c) => c.slug,
);
const challenges = new Map<string, unknown>();
for (const city of cities) {
  const res = await fetch(`${input.url}/v1/subscribe?city=${city}&count=${COUNT}`, { method: 'POST' });
  if (res.status !== 402) throw new Error(`challenge for ${city}: ${res.status}`);
  challenges.set(city, await res.json());
}
type Job = { city: string; xPayment: string };
const jobs: Job[] = [];
for (let a = 0; a < ACCOUNTS; a++) {
  const account = privateKeyToAccount(keccak256(toHex(`isocast-bench-buyer-${a}`)));
  for (const city of cities)
    jobs.push({ city, xPayment: (await payFor402(challenges.get(city), account, { validForSeconds: 300 })).xPayment });
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
const post = async (j: Job) => {
  const res = await fetch(`${input.url}/v1/subscribe?city=${j.city}&count=${COUNT}`, {
    method: 'POST',
    headers: { 'x-payment': j.xPayment },
  });
  const body = (await res.json()) as { idempotent?: boolean };
  if (res.status !== 200 || body.idempotent !== false) failures++;
};

// Warm-up: JIT on both sides, keep-alive connections open, the SQLite page cache. The server's
// payment path takes a few hundred purchases to reach its steady speed (runs with 32 here had
// their first two rounds 30 % slower than the rest), so it gets 10 per connection.
for (let i = 0; i < 300; i++) {
  await recover(i);
  await recoverViem(i);
}
let next = Math.min(CONCURRENCY * 10, Math.floor(jobs.length / 4));
let w = 0;
await Promise.all(
  Array.from({ length: CONCURRENCY }, async () => {
    while (w < next) await post(jobs[w++]!);
  }),
);

const perRound = Math.floor((jobs.length - next) / ROUNDS);
const rounds: { subscribesPerSec: number; recoveriesPerSec: number; viemRecoveriesPerSec: number }[] = [];
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
  let k = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (k < batch.length) await post(batch[k++]!);
    }),
  );
  const subscribesPerSec = batch.length / ((performance.now() - t0) / 1000);
  rounds.push({ subscribesPerSec, recoveriesPerSec, viemRecoveriesPerSec });
}
if (failures > 0) throw new Error(`${failures} subscribes did not answer 200 with a fresh purchase`);
const ratios = rounds.map((r) => r.subscribesPerSec / r.recoveriesPerSec);
process.stdout.write(
  JSON.stringify({
    subscribes: next,
    concurrency: CONCURRENCY,
    rounds,
    subscribesPerSec: median(rounds.map((r) => r.subscribesPerSec)),
    recoveriesPerSec: median(rounds.map((r) => r.recoveriesPerSec)),
    viemRecoveriesPerSec: median(rounds.map((r) => r.viemRecoveriesPerSec)),
    ratio: median(ratios),
    ratioSpread: spread(ratios),
  }) + '\n',
);
