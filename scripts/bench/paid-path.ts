/**
 * The paid inline read's path, counted: `node scripts/bench/paid-path.ts` starts isocast as the
 * peer run does (live mode, the fake facilitator, scripts/bench/peer.ts `liveServeEnv`) under the
 * inspector, buys two warm-up reads (lazy imports, compiled statements), then takes V8's precise
 * coverage (call counts) over one paid `GET /v1/signals` with X-Payment and prints the files,
 * functions and calls it ran: under src/ (ours) and in all (Node's and the packages' included).
 * `ISOCAST_BENCH_SRC=<dir>` counts another checkout's src/ (before/after).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { keccak256, toHex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { payFor402 } from '../../packages/isocast-client/src/index.ts';
import { liveServeEnv, spawnFacilitator } from './peer.ts';
import { freePort, NODE, ROOT, spawnServer, type Spawned } from './util.ts';

type Coverage = { url: string; functions: { functionName: string; ranges: { count: number }[] }[] }[];

const dir = mkdtempSync(join(tmpdir(), 'isocast-paid-path-'));
const procs: Spawned[] = [];
try {
  mkdirSync(join(dir, 'data'));
  const ofac = join(dir, 'sdn.txt');
  writeFileSync(ofac, '0x7F367cC41522cE07553e823bf3be79A889DEbe1B\n');
  const facilitator = await spawnFacilitator(dir);
  procs.push(facilitator);
  const port = await freePort();
  const inspectPort = await freePort();
  const closed = `http://127.0.0.1:${await freePort()}`;
  const isocast = await spawnServer(
    NODE,
    [
      `--inspect=127.0.0.1:${inspectPort}`,
      join(process.env.ISOCAST_BENCH_SRC ?? join(ROOT, 'src'), 'main.ts'),
      'serve',
    ],
    {
      port,
      logFile: join(dir, 'isocast.log'),
      env: liveServeEnv({ dir, port, facilitatorUrl: facilitator.url, closed, ofac }),
    },
  );
  procs.push(isocast);

  const [target] = (await (await fetch(`http://127.0.0.1:${inspectPort}/json/list`)).json()) as {
    webSocketDebuggerUrl: string;
  }[];
  const ws = new WebSocket(target!.webSocketDebuggerUrl);
  await new Promise((r, j) => {
    ws.onopen = r;
    ws.onerror = j;
  });
  let id = 0;
  const waiting = new Map<number, (v: unknown) => void>();
  ws.onmessage = (m) => {
    const msg = JSON.parse(String(m.data)) as { id?: number; result?: unknown };
    if (msg.id !== undefined) waiting.get(msg.id)?.(msg.result);
  };
  const send = (method: string, params: object = {}) =>
    new Promise<unknown>((resolve) => {
      waiting.set(++id, resolve);
      ws.send(JSON.stringify({ id, method, params }));
    });

  let n = 0;
  const paidRead = async () => {
    const account = privateKeyToAccount(keccak256(toHex(`isocast-paid-path-${n++}`)));
    const url = `${isocast.url}/v1/signals?city=nyc&count=20&since=0`;
    const challenge = await (await fetch(url)).json();
    const xPayment = (await payFor402(challenge, account)).xPayment;
    return async () => {
      const res = await fetch(url, { headers: { 'x-payment': xPayment } });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`paid read answered ${res.status}`);
    };
  };
  // Past the start-up timers (the first tick, the delivery worker, retention, the checkpointer: 0.25-1 s):
  // counted right after the start, their first passes landed in the window on some runs.
  await new Promise((r) => setTimeout(r, 1_500));
  for (let i = 0; i < 2; i++) await (await paidRead())();
  const counted = await paidRead();
  await send('Profiler.enable');
  await send('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
  await send('Profiler.takePreciseCoverage');
  await counted();
  const { result } = (await send('Profiler.takePreciseCoverage')) as { result: Coverage };
  ws.close();

  const tally = (keep: (url: string) => boolean) => {
    let files = 0;
    let functions = 0;
    let calls = 0;
    const names: string[] = [];
    for (const script of result) {
      if (!keep(script.url)) continue;
      const ran = script.functions.filter((f) => (f.ranges[0]?.count ?? 0) > 0);
      if (ran.length === 0) continue;
      files++;
      functions += ran.length;
      calls += ran.reduce((s, f) => s + f.ranges[0]!.count, 0);
      names.push(script.url.replace(/^.*\/src\//, 'src/'));
    }
    return { files, functions, calls, names };
  };
  const ours = tally((u) => u.includes('/src/') && !u.includes('node_modules'));
  const all = tally((u) => u !== '');
  process.stdout.write(
    `${JSON.stringify({ src: { ...ours, names: ours.names.sort() }, all: { files: all.files, functions: all.functions, calls: all.calls } }, null, 1)}\n`,
  );
} finally {
  for (const p of procs.reverse()) await p.stop();
  rmSync(dir, { recursive: true, force: true });
}
