/**
 * Load client for the peer comparison (a child process of scripts/bench/peer.ts): paid requests
 * at a fixed concurrency against isocast (`POST /v1/subscribe` and the inline paid
 * `GET /v1/signals`, each over x402 v1 `X-Payment` and v2 `PAYMENT-SIGNATURE`, live mode,
 * facilitator settlement) and against the reference `@x402/hono` paid GET, all settling through
 * the same fake facilitator.
 *
 * Every request carries a fresh, valid EIP-3009 authorization signed before timing: isocast's v1
 * through payFor402 (@isocast/client) from its real 402 bodies, its v2 through `@x402/core`'s
 * client with @isocast/client's scheme (IsocastExactScheme) from the real `PAYMENT-REQUIRED`
 * headers (distinct payers, cities and counts give distinct bound nonces), the peer's through
 * `@x402/core`'s client with `@x402/evm`'s exact scheme from its real 402 (a random nonce each).
 * Timed: rounds that visit the five targets in a rotating order, a fixed batch each, reading each
 * server's CPU time from /proc around its batch. Every paid request must answer 200 (isocast: a
 * fresh purchase, not a replay).
 *
 * node scripts/bench/peer-load.ts '{"isocast":{"url":…,"pid":1},"peer":{"url":…,"pid":2,"path":"/v1/paid"},…}'
 */
import { Agent, request } from 'node:http';
import { keccak256, toHex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { x402Client, x402HTTPClient } from '@x402/core/client';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { IsocastExactScheme, payFor402, registerIsocast } from '../../packages/isocast-client/src/index.ts';
import { cpuNs, median, spread } from './util.ts';

export type PeerLoadInput = {
  isocast: { url: string; pid: number };
  peer: { url: string; pid: number; path: string };
  concurrency: number;
  rounds: number;
  /** Paid requests per round for each isocast target, and for the peer (it runs faster). */
  isocastPerRound: number;
  peerPerRound: number;
  warmup: number;
};
const TARGETS = ['subscribe', 'signals', 'subscribeV2', 'signalsV2', 'peer'] as const;
type Target = (typeof TARGETS)[number];
type IsocastTarget = Exclude<Target, 'peer'>;
type Job = { method: 'GET' | 'POST'; path: string; headers: Record<string, string> };
export type Batch = {
  target: Target;
  requests: number;
  seconds: number;
  rps: number;
  /** Server CPU per request: every thread, and the main thread (the event loop) alone. */
  cpuUsPerReq: number;
  mainUsPerReq: number;
};

const input = JSON.parse(process.argv[2] ?? '{}') as PeerLoadInput;
const agents = new Map<string, Agent>();
const log = (line: string) => process.stderr.write(`peer-load: ${line}\n`);

/** One request on a keep-alive connection; resolves with the status, the body and the headers. */
function send(
  base: string,
  job: Job,
  retried = false,
): Promise<{ status: number; body: string; headers: Record<string, string | string[] | undefined> }> {
  let agent = agents.get(base);
  if (!agent) {
    agent = new Agent({ keepAlive: true, maxSockets: input.concurrency });
    agents.set(base, agent);
  }
  const u = new URL(job.path, base);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname + u.search,
        method: job.method,
        headers: job.headers,
        agent,
        timeout: 30_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), headers: res.headers }),
        );
      },
    );
    req.once('error', (err: NodeJS.ErrnoException) => {
      // A keep-alive socket the server closed while idle (between phases): the request never
      // reached it, so it is sent once more on a new connection, as Node's docs advise.
      if (req.reusedSocket && err.code === 'ECONNRESET' && !retried) send(base, job, true).then(resolve, reject);
      else reject(err);
    });
    req.once('timeout', () => req.destroy(new Error('timeout')));
    req.end();
  });
}

// --- signing, before any timing ---
const cities = (
  JSON.parse((await send(input.isocast.url, { method: 'GET', path: '/v1/cities', headers: {} })).body) as {
    cities: { slug: string }[];
  }
).cities.map((c) => c.slug);
/** The next payer index per target: a (payer, city, count) is never signed twice under one salt. */
const payerIndex = Object.fromEntries(TARGETS.map((t) => [t, 0])) as Record<Target, number>;
const COUNTS: Record<IsocastTarget, number> = { subscribe: 20, signals: 21, subscribeV2: 22, signalsV2: 23 };
/**
 * n paid requests for one target, signed just before its batch (untimed) from 402s fetched then:
 * on a loaded machine signing the whole run up front took longer than an authorization may live.
 */
async function isocastJobs(target: IsocastTarget, n: number): Promise<Job[]> {
  const count = COUNTS[target];
  const subscribe = target === 'subscribe' || target === 'subscribeV2';
  const v2 = target === 'subscribeV2' || target === 'signalsV2';
  const method = subscribe ? 'POST' : 'GET';
  const path = (city: string) =>
    subscribe ? `/v1/subscribe?city=${city}&count=${count}` : `/v1/signals?city=${city}&count=${count}&since=0`;
  const challenges = new Map<string, Awaited<ReturnType<typeof send>>>();
  const jobs: Job[] = [];
  while (jobs.length < n) {
    const a = payerIndex[target]++;
    const account = privateKeyToAccount(keccak256(toHex(`isocast-bench-peer-${target}-${a}`)));
    const client = v2 ? new x402HTTPClient(registerIsocast(new x402Client(), new IsocastExactScheme(account))) : null;
    for (const city of cities) {
      if (jobs.length >= n) break;
      let r = challenges.get(city);
      if (!r) {
        r = await send(input.isocast.url, { method, path: path(city), headers: {} });
        if (r.status !== 402) throw new Error(`${target} challenge for ${city}: ${r.status} ${r.body.slice(0, 200)}`);
        challenges.set(city, r);
      }
      if (client) {
        const required = client.getPaymentRequiredResponse((name) => header(r.headers, name), JSON.parse(r.body));
        const payload = await client.createPaymentPayload(required);
        jobs.push({ method, path: path(city), headers: client.encodePaymentSignatureHeader(payload) });
      } else {
        const pay = await payFor402(JSON.parse(r.body), account);
        jobs.push({ method, path: path(city), headers: { 'x-payment': pay.xPayment } });
      }
    }
  }
  return jobs;
}
function header(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const v = headers[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
}
async function peerJobs(n: number): Promise<Job[]> {
  const r = await send(input.peer.url, {
    method: 'GET',
    path: input.peer.path,
    headers: { accept: 'application/json' },
  });
  if (r.status !== 402) throw new Error(`peer challenge: ${r.status} ${r.body.slice(0, 200)}`);
  const jobs: Job[] = [];
  while (jobs.length < n) {
    const account = privateKeyToAccount(keccak256(toHex(`isocast-bench-peer-buyer-${payerIndex.peer++}`)));
    const client = new x402HTTPClient(registerExactEvmScheme(new x402Client(), { signer: account }));
    const required = client.getPaymentRequiredResponse((name) => header(r.headers, name), JSON.parse(r.body || '{}'));
    for (let k = 0; k < 50 && jobs.length < n; k++) {
      const payload = await client.createPaymentPayload(required);
      jobs.push({ method: 'GET', path: input.peer.path, headers: client.encodePaymentSignatureHeader(payload) });
    }
  }
  return jobs;
}
const prepare = (target: Target, n: number) => (target === 'peer' ? peerJobs(n) : isocastJobs(target, n));

// --- timed ---
const base = (t: Target) => (t === 'peer' ? input.peer.url : input.isocast.url);
const pid = (t: Target) => (t === 'peer' ? input.peer.pid : input.isocast.pid);
let failures = 0;
let firstFailure = '';
function ok(target: Target, r: { status: number; body: string; headers: Record<string, unknown> }): boolean {
  if (r.status !== 200) return false;
  if (target === 'subscribe' || target === 'subscribeV2')
    return (JSON.parse(r.body) as { idempotent?: boolean }).idempotent === false;
  if (target === 'signals' || target === 'signalsV2') return typeof r.headers['x-receipt-token'] === 'string';
  return typeof r.headers['payment-response'] === 'string';
}
let signed = 0;
let signingMs = 0;
async function batch(target: Target, n: number): Promise<Batch> {
  const t0 = performance.now();
  const list = await prepare(target, n);
  signingMs += performance.now() - t0;
  signed += list.length;
  let k = 0;
  const cpu0 = cpuNs(pid(target));
  const main0 = cpuNs(pid(target), 'main');
  const start = performance.now();
  await Promise.all(
    Array.from({ length: input.concurrency }, async () => {
      while (k < list.length) {
        const r = await send(base(target), list[k++]!);
        if (!ok(target, r)) {
          failures++;
          firstFailure ||= `${target}: ${r.status} ${r.body.slice(0, 300)}`;
        }
      }
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  const perReq = (ns: number) => Math.round(ns / 1000 / list.length);
  return {
    target,
    requests: list.length,
    seconds,
    rps: list.length / seconds,
    cpuUsPerReq: perReq(cpuNs(pid(target)) - cpu0),
    mainUsPerReq: perReq(cpuNs(pid(target), 'main') - main0),
  };
}

// Warm-up: JIT, keep-alive connections to the servers and from them to the facilitator.
for (const t of TARGETS) await batch(t, input.warmup);
// Each round starts one target later, so none always runs right after the same one.
const order: Target[][] = TARGETS.map((_, r) => TARGETS.map((__, k) => TARGETS[(r + k) % TARGETS.length]!));
const rounds: Batch[][] = [];
for (let r = 0; r < input.rounds; r++) {
  const row: Batch[] = [];
  for (const t of order[r % order.length]!)
    row.push(await batch(t, t === 'peer' ? input.peerPerRound : input.isocastPerRound));
  rounds.push(row);
}
log(`signed ${signed} authorizations, ${(signingMs / 1000).toFixed(1)} s untimed`);
if (failures > 0) throw new Error(`${failures} paid requests failed; first: ${firstFailure}`);

const of = (row: Batch[], t: Target) => row.find((b) => b.target === t)!;
const summary = (t: Target) => ({
  rps: Math.round(median(rounds.map((row) => of(row, t).rps))),
  cpuUsPerReq: Math.round(median(rounds.map((row) => of(row, t).cpuUsPerReq))),
  mainUsPerReq: Math.round(median(rounds.map((row) => of(row, t).mainUsPerReq))),
});
const ratio = (t: IsocastTarget) => {
  const rps = rounds.map((row) => of(row, t).rps / of(row, 'peer').rps);
  const cpu = rounds.map((row) => of(row, t).cpuUsPerReq / of(row, 'peer').cpuUsPerReq);
  return {
    rpsRatio: Number(median(rps).toFixed(3)),
    rpsRatioSpread: Number(spread(rps).toFixed(2)),
    cpuPerReqMultiple: Number(median(cpu).toFixed(2)),
  };
};
process.stdout.write(
  JSON.stringify({
    concurrency: input.concurrency,
    rounds: input.rounds,
    isocastPerRound: input.isocastPerRound,
    peerPerRound: input.peerPerRound,
    subscribe: { ...summary('subscribe'), ...ratio('subscribe') },
    signals: { ...summary('signals'), ...ratio('signals') },
    subscribeV2: { ...summary('subscribeV2'), ...ratio('subscribeV2') },
    signalsV2: { ...summary('signalsV2'), ...ratio('signalsV2') },
    peer: summary('peer'),
    perRound: rounds.map((row) =>
      row.map((b) => ({
        target: b.target,
        rps: Math.round(b.rps),
        cpuUsPerReq: b.cpuUsPerReq,
        mainUsPerReq: b.mainUsPerReq,
      })),
    ),
  }) + '\n',
);
for (const a of agents.values()) a.destroy();
