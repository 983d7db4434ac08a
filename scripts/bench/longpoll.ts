/**
 * Long-poll reads (issue 25.4): commit -> HTTP buyer received, with `n` buyers waiting at once on
 * `GET /v1/signals?...&wait=25`, and the memory each waiting request holds on the server.
 *
 * This process is the server: the real app (createApp, a real SQLite file, mock payments) behind
 * the real listener (src/ops/http-server.ts), one bundle bought over HTTP, signals committed
 * through the poller's write path (signals/store.ts storeSignal, which wakes the waiters). The
 * buyers are `procs` other processes. Each round: wait until all `n` are held, commit one signal,
 * and take (arrival - commit returned) for every buyer. Memory: heap and RSS after a full GC with
 * `n` held, minus the same before the buyers connected, over `n` (sockets, request and response
 * objects and the waiter together: what a held read costs).
 *
 * Both sides in one run: `serverWrittenMs` is commit -> the server's `res.end()` returned for each
 * answer (its bytes handed to the socket), beside the buyers' `commitToReceivedMs`. `client`
 * picks the buyers: `raw` (longpoll-raw-buyers.ts, sockets framed by hand, a few µs per answer)
 * or `http` (longpoll-buyers.ts, node:http's client, a few hundred µs per answer: on a 2-core
 * machine 1,000 of those in one process take longer than the server does to write them).
 *
 * node scripts/bench/longpoll.ts '{"n":1000,"rounds":10,"client":"raw","procs":1}'
 * (or: npm run bench -- --only longpoll, which runs both clients)
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createApp } from '../../src/app.ts';
import { createCatalog } from '../../src/cities/catalog.ts';
import { loadConfig } from '../../src/config.ts';
import { openDb } from '../../src/db/open.ts';
import { createConnectionCap } from '../../src/limits/connections.ts';
import { parseTrustedProxies } from '../../src/limits/client-address.ts';
import { systemClock } from '../../src/lib/clock.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { startHttpServer } from '../../src/ops/http-server.ts';
import { createMockSettler } from '../../src/payments/settlers/mock.ts';
import { loadSanctionsList } from '../../src/sanctions/list.ts';
import { createStores } from '../../src/stores.ts';
import { crossings } from '../../test/helpers/crossings.ts';
import { buy, over } from '../../test/payments/buy.ts';
import { NODE, ROOT } from './util.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const input = JSON.parse(process.argv[2] ?? '{}') as {
  n?: number;
  rounds?: number;
  client?: 'raw' | 'http';
  procs?: number;
};
const N = input.n ?? 1000;
const ROUNDS = input.rounds ?? 10;
const CLIENT = input.client ?? 'raw';
const PROCS = Math.max(1, Math.min(input.procs ?? 1, N));
const CITY = 'nyc';

const dir = mkdtempSync(join(tmpdir(), 'isocast-longpoll-'));
const config = loadConfig({
  DATA_DIR: dir,
  BASE_URL: 'http://127.0.0.1:8402',
  // One buyer process opens every socket from 127.0.0.1: no per-address cap, no request limits.
  RATE_LIMIT_ADDRESS_PER_MIN: '0',
  RATE_LIMIT_WALLET_PER_MIN: '0',
  MAX_SIGNAL_WAITERS: String(N),
});
const db = openDb(join(dir, 'isocast.db'));
const catalog = createCatalog();
const stores = createStores(db);
const app = createApp({
  config,
  db,
  stores,
  catalog,
  clock: systemClock,
  logger: createLogger({ level: 'debug', write: () => {} }),
  sanctions: loadSanctionsList({ path: config.OFAC_LIST_PATH, extra: config.OFAC_EXTRA }),
  secret: Buffer.alloc(32, 0x5e),
  settler: createMockSettler(),
});
const server = startHttpServer({
  fetch: app.fetch,
  hostname: '127.0.0.1',
  port: 0,
  cap: createConnectionCap({ max: 0, trustedProxies: parseTrustedProxies('') }),
  disclaimer: 'bench',
});
await new Promise<void>((resolve) => server.once('listening', () => resolve()));
// When each answer left the server: res.end() returned (headers and body handed to the socket).
// Patched on the prototype, so no held request carries an extra closure into the memory figure.
const written: number[] = [];
const end = ServerResponse.prototype.end as (this: ServerResponse, ...a: unknown[]) => ServerResponse;
ServerResponse.prototype.end = function (this: ServerResponse, ...a: unknown[]) {
  const r = end.apply(this, a);
  written.push(performance.timeOrigin + performance.now());
  return r;
} as typeof ServerResponse.prototype.end;
const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
const feed = crossings(stores.signals, catalog.get(CITY)!, Date.now());
feed.next(); // latest 1
const bought = await buy(over(base), privateKeyToAccount(generatePrivateKey()), CITY, ROUNDS + 5, Date.now());
if (bought.status !== 200) throw new Error(`purchase failed: ${JSON.stringify(bought.body)}`);
const notifier = stores.notifier;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const memory = () => {
  gc();
  gc();
  const m = process.memoryUsage();
  return { heap: m.heapUsed, rss: m.rss };
};
const before = memory();

const script = join(ROOT, 'scripts', 'bench', CLIENT === 'raw' ? 'longpoll-raw-buyers.ts' : 'longpoll-buyers.ts');
const buyers = Array.from({ length: PROCS }, (_, i) => {
  const n = Math.floor(N / PROCS) + (i < N % PROCS ? 1 : 0);
  const args = { base, token: bought.body.receiptToken, city: CITY, n, rounds: ROUNDS, since: 1 };
  const child = spawn(NODE, [script, JSON.stringify(args)], { stdio: ['pipe', 'pipe', 'inherit'] });
  return { child, answers: createInterface({ input: child.stdout! })[Symbol.asyncIterator]() };
});
const latencies: number[] = [];
const serverSide: number[] = [];
let held: { heap: number; rss: number } | null = null;
let bad = 0;
for (let round = 0; round < ROUNDS; round++) {
  for (let i = 0; notifier.waiting() < N; i++) {
    if (i > 6_000) throw new Error(`only ${notifier.waiting()} of ${N} reads held after 60 s`);
    await sleep(10);
  }
  await sleep(200); // every held request settled (no half-parsed request left in flight)
  if (round === 0) held = memory();
  written.length = 0;
  feed.next();
  const committed = performance.timeOrigin + performance.now();
  for (const b of buyers) {
    const line = await b.answers.next();
    const r = JSON.parse(line.value as string) as { at: number[]; bad: number };
    bad += r.bad;
    for (const at of r.at) latencies.push(at - committed);
  }
  for (const at of written) serverSide.push(at - committed);
  for (const b of buyers) b.child.stdin!.write('next\n');
}
await Promise.all(buyers.map((b) => new Promise((r) => b.child.once('exit', r))));
server.closeAllConnections();
server.close();
db.close();
rmSync(dir, { recursive: true, force: true });

const round1 = (x: number) => Math.round(x * 10) / 10;
const spread = (xs: number[]) => {
  xs.sort((a, b) => a - b);
  const pct = (p: number) => round1(xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!);
  return { p50: pct(50), p99: pct(99), max: round1(xs.at(-1)!) };
};
process.stdout.write(
  `${JSON.stringify({
    waiters: N,
    rounds: ROUNDS,
    client: CLIENT,
    buyerProcesses: PROCS,
    samples: latencies.length,
    badAnswers: bad,
    commitToReceivedMs: spread(latencies),
    serverWrittenMs: spread(serverSide),
    targetP99Ms: 100,
    memoryPerWaiterBytes: {
      heap: Math.round((held!.heap - before.heap) / N),
      rss: Math.round((held!.rss - before.rss) / N),
    },
  })}\n`,
);
