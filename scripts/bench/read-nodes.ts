import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { privateKeyToAccount } from 'viem/accounts';
import { payFor402 } from '../../packages/isocast-client/src/index.ts';
import { startNatsServer } from '../../test/helpers/nats.ts';
import { startServer } from '../../test/chaos/server.ts';
import { CHAOS_CITIES, publishBaselines, startUpstreams } from '../../test/chaos/upstreams.ts';

/**
 * Read nodes (issue 40), measured on this machine: a primary and one reader as real processes
 * with a real nats-server. Prints bearer reads per second on each, how many long polls one reader
 * holds (and its RSS), and the wake delay of a held read on the reader after the same read on the
 * primary (p50/p99 over the crossings of the fake feed). `node scripts/bench/read-nodes.ts [held]`
 */
const HELD = Number(process.argv[2] ?? 2000);
const dir = mkdtempSync(join(tmpdir(), 'isocast-readnodes-'));
const nats = await startNatsServer(join(dir, 'nats'));
const u = await startUpstreams(CHAOS_CITIES);
u.ensureEvents(Date.now());
publishBaselines(u, Date.now());
const common = {
  NATS_URL: nats.url,
  SERVER_SECRET: 'c4'.repeat(32),
  BASE_URL: 'http://isocast.test',
  CITIES: CHAOS_CITIES.join(','),
  MARKET_KINDS: 'high',
  LOG_LEVEL: 'warn',
  RATE_LIMIT_ADDRESS_PER_MIN: '0',
  RATE_LIMIT_WALLET_PER_MIN: '0',
  MAX_CONNECTIONS_PER_ADDRESS: '0',
  MAX_SIGNAL_WAITERS: '100000',
};
for (const d of ['p', 'r']) mkdirSync(join(dir, d));
const primary = await startServer({
  dataDir: join(dir, 'p'),
  env: {
    ...common,
    FEED: 'live',
    POLL_INTERVAL_MS: '250',
    GAMMA_URL: u.gamma.url,
    CLOB_URL: u.clob.url,
    METAR_URL: u.metar.url,
  },
});
const reader = await startServer({
  dataDir: join(dir, 'r'),
  env: { ...common, ROLE: 'reader', PRIMARY_URL: primary.baseUrl },
});
const json = async (url: string, init?: RequestInit) => {
  const res = await fetch(url, init);
  return { status: res.status, body: (await res.json()) as any };
};
const latest = async (base: string, city: string) =>
  (await json(`${base}/v1/signals/meta?city=${city}`)).body.latestSeq as number;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const account = privateKeyToAccount(`0x${'a1'.repeat(32)}`);
const tokens: Record<string, string> = {};
for (const city of CHAOS_CITIES) {
  const url = `${primary.baseUrl}/v1/subscribe?city=${city}&count=50`;
  const pay = await payFor402((await json(url, { method: 'POST' })).body, account);
  tokens[city] = (await json(url, { method: 'POST', headers: { 'x-payment': pay.xPayment } })).body.receiptToken;
}
const token = tokens[CHAOS_CITIES[0]]!;
await sleep(1500);

async function readsPerSecond(base: string, seconds: number, concurrency: number): Promise<number> {
  let n = 0;
  const end = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        const res = await fetch(`${base}/v1/signals?city=${CHAOS_CITIES[0]}`, {
          headers: { authorization: `Bearer ${token}` },
        });
        await res.arrayBuffer();
        if (res.status === 200) n++;
      }
    }),
  );
  return Math.round(n / seconds);
}
console.log(
  `bearer reads/s (32 concurrent, 5 s): primary ${await readsPerSecond(primary.baseUrl, 5, 32)}, reader ${await readsPerSecond(reader.baseUrl, 5, 32)}`,
);

// Held reads on the reader.
const city0 = CHAOS_CITIES[0];
const since0 = await latest(reader.baseUrl, city0);
const aborts = new AbortController();
const held = Array.from({ length: HELD }, () =>
  fetch(`${reader.baseUrl}/v1/signals?city=${city0}&since=${since0}&wait=25`, {
    headers: { authorization: `Bearer ${token}` },
    signal: aborts.signal,
  }).catch(() => null),
);
await sleep(3000);
const rss = (await import('node:child_process')).execSync(`ps -o rss= -p ${reader.pid}`).toString().trim();
console.log(`${HELD} held reads open on the reader; reader RSS ${Math.round(Number(rss) / 1024)} MiB`);
const moved = performance.now();
u.move(city0, 1, Date.now());
const nudge = setInterval(() => u.move(city0, 0, Date.now()), 1000);
const answered = await Promise.all(held.map((p) => p.then((r) => (r?.status === 200 ? performance.now() : null))));
clearInterval(nudge);
const ok = answered.filter((x): x is number => x !== null);
console.log(`${ok.length}/${HELD} held reads answered; last ${Math.round(Math.max(...ok) - moved)} ms after the move`);

// Wake delay, reader after primary, over the crossings.
const deltas: number[] = [];
for (let round = 0; round < 32; round++) {
  const city = CHAOS_CITIES[round % CHAOS_CITIES.length]!;
  const since = await latest(primary.baseUrl, city);
  while ((await latest(reader.baseUrl, city)) < since) await sleep(20);
  const hold = (base: string) =>
    fetch(`${base}/v1/signals?city=${city}&since=${since}&wait=25`, {
      headers: { authorization: `Bearer ${tokens[city]}` },
    }).then(async (r) => ({ n: ((await r.json()) as any).signals?.length ?? 0, at: performance.now() }));
  const both = [hold(primary.baseUrl), hold(reader.baseUrl)];
  await sleep(100);
  u.move(city, 1, Date.now());
  const n = setInterval(() => u.move(city, 0, Date.now()), 1000);
  const [p, r] = await Promise.all(both);
  clearInterval(n);
  if (p!.n > 0 && r!.n > 0) deltas.push(r!.at - p!.at);
}
deltas.sort((a, b) => a - b);
const q = (f: number) => deltas[Math.min(deltas.length - 1, Math.floor(f * deltas.length))]!.toFixed(1);
console.log(
  `wake delay reader - primary over ${deltas.length} crossings: p50 ${q(0.5)} ms, p99 ${q(0.99)} ms, max ${deltas.at(-1)!.toFixed(1)} ms`,
);
aborts.abort();
await reader.kill('SIGTERM');
await primary.kill('SIGTERM');
await nats.kill();
await u.close();
rmSync(dir, { recursive: true, force: true });
