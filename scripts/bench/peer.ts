/** One line per paid path: throughput and CPU per request against the peer, with the load average. */
export function peerSummary(r: PeerResult, load: number[]): string {
  const lines = (Object.keys(PEER_PATHS) as (keyof typeof PEER_PATHS)[]).map((k) => {
    const p = r[k];
    return `  ${PEER_PATHS[k].padEnd(42)} rps x${p.rpsRatio.toFixed(2)} (spread ${p.rpsRatioSpread}), CPU/req ${p.cpuUsPerReq} us = x${p.cpuPerReqMultiple.toFixed(2)} the peer's ${r.peer.cpuUsPerReq} us`;
  });
  return `peer (targets: rps >= x1.15, CPU/req <= x0.8; load ${load.map((x) => x.toFixed(2)).join(' ')})\n${lines.join('\n')}`;
}

/**
 * The peer comparison (`npm run bench -- --only peer`, and a section of the full run): isocast's
 * paid requests against the reference x402 stack, one machine, one run, the same instant fake
 * facilitator (scripts/bench/facilitator.ts) for both.
 *
 *   isocast  `node src/main.ts serve` in live mode (PAYMENT_MODE=live, SETTLEMENT=facilitator),
 *            the sanctions list loaded from a file, FEED=live pointed at a closed local port with
 *            the poller's interval at an hour (its one start-up tick fails fast and it stays
 *            quiet), so nothing but the paid requests uses its CPU;
 *   peer     scripts/bench/peer-server.ts: `@x402/hono` + `@x402/core` + `@x402/evm` guarding a
 *            paid GET whose body is as large as isocast's subscribe answer, measured first.
 *
 * Load: scripts/bench/peer-load.ts, concurrency 8, pre-signed fresh authorizations.
 * `ISOCAST_BENCH_SRC=<dir>` runs another checkout's src/main.ts (for before/after figures);
 * `ISOCAST_BENCH_NODE_ARGS` adds node flags to isocast's process (`--cpu-prof`).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { keccak256, toHex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { payFor402 } from '../../packages/isocast-client/src/index.ts';
import { PEER_PATH } from './peer-path.ts';
import { freePort, NODE, ROOT, runJson, spawnServer, type Spawned } from './util.ts';

export type PeerSide = { rps: number; cpuUsPerReq: number; mainUsPerReq: number };
export type PeerPath = PeerSide & { rpsRatio: number; rpsRatioSpread: number; cpuPerReqMultiple: number };
/** isocast's four paid paths: subscribe and the inline paid read, each over x402 v1 and v2. */
export const PEER_PATHS = {
  subscribe: 'POST /v1/subscribe, v1 X-Payment',
  subscribeV2: 'POST /v1/subscribe, v2 PAYMENT-SIGNATURE',
  signals: 'paid GET /v1/signals, v1 X-Payment',
  signalsV2: 'paid GET /v1/signals, v2 PAYMENT-SIGNATURE',
} as const;
export type PeerResult = {
  concurrency: number;
  rounds: number;
  isocastPerRound: number;
  peerPerRound: number;
  bodyBytes: number;
  subscribe: PeerPath;
  signals: PeerPath;
  subscribeV2: PeerPath;
  signalsV2: PeerPath;
  peer: PeerSide;
  perRound: { target: string; rps: number; cpuUsPerReq: number; mainUsPerReq: number }[][];
};

const PAY_TO = '0x00000000000000000000000000000000000b3bc4';

export async function runPeer(opts: {
  runDir: string;
  quick: boolean;
  log: (line: string) => void;
}): Promise<PeerResult> {
  const dir = join(opts.runDir, 'peer');
  mkdirSync(join(dir, 'data'), { recursive: true });
  // A real list, so screening runs on every purchase as it does in production.
  const ofac = join(dir, 'sdn.txt');
  writeFileSync(
    ofac,
    '# bench sanctions list\n0x7F367cC41522cE07553e823bf3be79A889DEbe1B\n0x098B716B8Aaf21512996dC57EB0615e2383E2f96\n',
  );
  const procs: Spawned[] = [];
  try {
    const facilitator = await spawnFacilitator(dir);
    procs.push(facilitator);
    const closed = `http://127.0.0.1:${await freePort()}`;
    const port = await freePort();
    const src = process.env.ISOCAST_BENCH_SRC ?? join(ROOT, 'src');
    // e.g. ISOCAST_BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" to profile the paid path.
    const nodeArgs = (process.env.ISOCAST_BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
    const isocast = await spawnServer(NODE, [...nodeArgs, join(src, 'main.ts'), 'serve'], {
      port,
      logFile: join(dir, 'isocast.log'),
      env: liveServeEnv({ dir, port, facilitatorUrl: facilitator.url, closed, ofac }),
    });
    procs.push(isocast);

    // isocast's subscribe answer, bought once, sets the peer's body size.
    const probe = privateKeyToAccount(keccak256(toHex('isocast-bench-peer-probe')));
    const url = `${isocast.url}/v1/subscribe?city=nyc&count=20`;
    const challenge = await (await fetch(url, { method: 'POST' })).json();
    const bought = await fetch(url, {
      method: 'POST',
      headers: { 'x-payment': (await payFor402(challenge, probe)).xPayment },
    });
    const answer = await bought.text();
    if (bought.status !== 200) throw new Error(`probe purchase answered ${bought.status}: ${answer.slice(0, 300)}`);
    const bodyBytes = Buffer.byteLength(answer);

    const peerPort = await freePort();
    const peer = await spawnServer(
      NODE,
      [
        join(ROOT, 'scripts', 'bench', 'peer-server.ts'),
        JSON.stringify({ port: peerPort, facilitatorUrl: facilitator.url, payTo: PAY_TO, bodyBytes }),
      ],
      { env: process.env, port: peerPort, logFile: join(dir, 'peer.log') },
    );
    procs.push(peer);
    const settings = opts.quick
      ? { concurrency: 8, rounds: 3, isocastPerRound: 150, peerPerRound: 450, warmup: 100 }
      : { concurrency: 8, rounds: 9, isocastPerRound: 300, peerPerRound: 900, warmup: 200 };
    opts.log(`peer: ${settings.rounds} rounds, concurrency ${settings.concurrency}, body ${bodyBytes} bytes`);
    const out = await runJson<Omit<PeerResult, 'bodyBytes'>>(join(ROOT, 'scripts', 'bench', 'peer-load.ts'), {
      isocast: { url: isocast.url, pid: isocast.child.pid },
      peer: { url: peer.url, pid: peer.child.pid, path: PEER_PATH },
      ...settings,
    });
    return { ...out, bodyBytes };
  } finally {
    for (const p of procs.reverse()) await p.stop();
  }
}

/**
 * isocast's environment in the peer run (and scripts/bench/paid-path.ts): live mode settling through
 * the fake facilitator, which also answers the receipt read; a real sanctions list; the poller
 * pointed at a closed port; limits on but high enough for one load client.
 */
/** The bench's instant facilitator (facilitator.ts) on a free port, logging into `dir`. */
export async function spawnFacilitator(dir: string): Promise<Spawned> {
  const port = await freePort();
  return spawnServer(NODE, [join(ROOT, 'scripts', 'bench', 'facilitator.ts'), JSON.stringify({ port })], {
    env: process.env,
    port,
    logFile: join(dir, 'facilitator.log'),
  });
}

export function liveServeEnv(o: { dir: string; port: number; facilitatorUrl: string; closed: string; ofac: string }) {
  const { dir, port, closed, ofac } = o;
  const facilitator = { url: o.facilitatorUrl };
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: dir,
    XDG_CACHE_HOME: join(dir, 'cache'),
    DATA_DIR: join(dir, 'data'),
    HOST: '127.0.0.1',
    PORT: String(port),
    BASE_URL: `http://127.0.0.1:${port}`,
    LOG_LEVEL: 'info',
    PAYMENT_MODE: 'live',
    SETTLEMENT: 'facilitator',
    FACILITATOR_URL: facilitator.url,
    PAY_TO,
    OFAC_REQUIRED: 'false',
    OFAC_LIST_PATH: ofac,
    FEED: 'live',
    WEATHER_SOURCE: 'metar',
    METAR_URL: closed,
    GAMMA_URL: closed,
    CLOB_URL: closed,
    POLL_INTERVAL_MS: '3600000',
    // Limits stay on (their cost is part of isocast's paid path) but high enough for one load client.
    RATE_LIMIT_ADDRESS_PER_MIN: '1000000',
    RATE_LIMIT_ADDRESS_BURST: '1000000',
    RATE_LIMIT_WALLET_PER_MIN: '1000000',
    RATE_LIMIT_WALLET_BURST: '1000000',
    // Never the public Base endpoint (live mode's default): the fake facilitator answers the one
    // eth_getTransactionReceipt each facilitator success costs ("paid" is the chain's word).
    RPC_URL: `${facilitator.url}/rpc`,
  };
}
