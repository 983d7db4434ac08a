/**
 * The floor under `scripts/bench/longpoll.ts`: the same buyers and rounds against a bare
 * node:http server that holds every request and, on "commit", answers each with one prebuilt
 * buffer (writeHead + end, the headers the real read sends): no app, no database, no Hono. What
 * is left here is Node's HTTP server, the kernel's loopback writes and the buyers, on this machine
 * at this load; the app's figure beside it shows what the app itself adds.
 *
 * node scripts/bench/longpoll-floor.ts '{"n":1000,"rounds":10,"client":"raw"}'
 */
import { spawn } from 'node:child_process';
import { createServer, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { NODE, ROOT } from './util.ts';

const input = JSON.parse(process.argv[2] ?? '{}') as { n?: number; rounds?: number; client?: 'raw' | 'http' };
const N = input.n ?? 1000;
const ROUNDS = input.rounds ?? 10;
const CLIENT = input.client ?? 'raw';

const held: ServerResponse[] = [];
const written: number[] = [];
const now = () => performance.timeOrigin + performance.now();
const server = createServer({ keepAliveTimeout: 5_000 }, (_req, res) => held.push(res));
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
const script = join(ROOT, 'scripts', 'bench', CLIENT === 'raw' ? 'longpoll-raw-buyers.ts' : 'longpoll-buyers.ts');
const buyers = spawn(
  NODE,
  [script, JSON.stringify({ base, token: 'floor', city: 'nyc', n: N, rounds: ROUNDS, since: 1 })],
  {
    stdio: ['pipe', 'pipe', 'inherit'],
  },
);
const answers = createInterface({ input: buyers.stdout! })[Symbol.asyncIterator]();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
// About the size of a one-signal page with its closing members.
const body = Buffer.from(
  JSON.stringify({
    signals: [{ seq: 2, city: 'nyc', note: 'x'.repeat(600) }],
    next_cursor: 2,
    paid_through: 20,
    latest: 2,
    more: false,
    disclaimer: 'bench',
  }),
);
const headers = {
  'content-type': 'application/json; charset=utf-8',
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'content-length': String(body.length),
};
const latencies: number[] = [];
const serverSide: number[] = [];
let bad = 0;
for (let round = 0; round < ROUNDS; round++) {
  for (let i = 0; held.length < N; i++) {
    if (i > 6_000) throw new Error(`only ${held.length} of ${N} requests held after 60 s`);
    await sleep(10);
  }
  await sleep(200);
  written.length = 0;
  const committed = now();
  for (const res of held.splice(0)) {
    res.writeHead(200, headers);
    res.end(body);
    written.push(now());
  }
  const line = await answers.next();
  const r = JSON.parse(line.value as string) as { at: number[]; bad: number };
  bad += r.bad;
  for (const at of r.at) latencies.push(at - committed);
  for (const at of written) serverSide.push(at - committed);
  buyers.stdin!.write('next\n');
}
await new Promise((r) => buyers.once('exit', r));
server.closeAllConnections();
server.close();

const round1 = (x: number) => Math.round(x * 10) / 10;
const spread = (xs: number[]) => {
  xs.sort((a, b) => a - b);
  const pct = (p: number) => round1(xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!);
  return { p50: pct(50), p99: pct(99), max: round1(xs.at(-1)!) };
};
process.stdout.write(
  `${JSON.stringify({
    server: 'bare node:http (floor)',
    waiters: N,
    rounds: ROUNDS,
    client: CLIENT,
    samples: latencies.length,
    badAnswers: bad,
    commitToReceivedMs: spread(latencies),
    serverWrittenMs: spread(serverSide),
  })}\n`,
);
