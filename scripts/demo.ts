/**
 * `npm run demo`: the buyer's journey in about 15 seconds, narrated, against an isocast instance
 * this script starts itself (mock payments, simulated feed, a temp DATA_DIR, 127.0.0.1 on $PORT
 * or a free port). It makes a throwaway wallet, shows the free endpoints, buys a Starter bundle for one
 * city with the CLI, reads the signals that arrive, shows the exhaustion 402, then stops the
 * instance and removes every file it made. Nothing here reaches the internet.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';

const ROOT = join(import.meta.dirname, '..');
const MAIN = join(ROOT, 'src', 'main.ts');
/**
 * Simulated time runs 1200x (a simulated hour is 3 real seconds; stations report every 20
 * simulated minutes, once a second). On its steepest stretch a warming city crosses a bucket every
 * couple of seconds.
 */
const SIM_SPEED = 1200;
const BUDGET_MS = 55_000;
/** Sim model (src/sources/sim/model.ts): the day's high so far is the midnight reading until the
 * morning overtakes it, around 09:20 local; the rise is steepest at 10:30 and ends at 15:00. */
const CROSSINGS_FROM_H = 9.4;
const CROSSINGS_UNTIL_H = 13;
const started = Date.now();
const dir = mkdtempSync(join(tmpdir(), 'isocast-demo-'));
let server: ChildProcess | null = null;

const elapsed = () => `${((Date.now() - started) / 1000).toFixed(1).padStart(4)} s`;
const say = (line = '') => process.stdout.write(`${line}\n`);
let stepNo = 0;
const step = (title: string) => say(`\n[${elapsed()}] ${++stepNo}. ${title}`);
const show = (text: string) =>
  say(
    text
      .trimEnd()
      .split('\n')
      .map((l) => `      ${l}`)
      .join('\n'),
  );

/** $PORT when set (the README's quick start uses it too), else a free port. */
async function demoPort(): Promise<number> {
  const raw = process.env.PORT;
  if (raw === undefined || raw === '') return freePort();
  const port = Number(raw);
  if (!/^\d+$/.test(raw) || port < 1 || port > 65_535)
    throw new Error(`PORT must be a TCP port number (1-65535), got ${raw}`);
  const busy = await new Promise<boolean>((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(true));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(false)));
  });
  if (busy) throw new Error(`PORT ${port} is already in use on 127.0.0.1; pick another or unset PORT for a free one`);
  return port;
}

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

async function getJson(base: string, path: string, init?: RequestInit): Promise<{ status: number; body: any }> {
  const res = await fetch(base + path, { ...init, signal: AbortSignal.timeout(5_000) });
  return { status: res.status, body: await res.json() };
}

/** Runs the CLI exactly as a buyer would (`node src/main.ts <command> ...`) and shows its output. */
function cli(args: string[], env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  say(`      $ isocast ${args.join(' ')}`);
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [MAIN, ...args], { cwd: dir, env: { PATH: process.env.PATH ?? '', ...env } });
    let out = '';
    child.stdout.on('data', (b) => {
      out += b;
    });
    child.stderr.on('data', (b) => {
      out += b;
    });
    child.on('close', (code) => {
      show(
        out
          .split('\n')
          .map((l) => `  ${l}`)
          .join('\n'),
      );
      resolve({ code, out });
    });
  });
}

async function until<T>(what: string, probe: () => Promise<T | null>, timeoutMs: number, everyMs = 250): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe().catch(() => null);
    if (v !== null) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Local wall-clock hour of `tz` at `ms`. */
function hourIn(tz: string, ms: number): number {
  const parts = new Intl.DateTimeFormat('en-GB', {
    timeZone: tz,
    hour: 'numeric',
    minute: 'numeric',
    hourCycle: 'h23',
  }).formatToParts(ms);
  return (
    Number(parts.find((p) => p.type === 'hour')!.value) + Number(parts.find((p) => p.type === 'minute')!.value) / 60
  );
}

async function demo(): Promise<void> {
  step('Start isocast: mock payments (signatures checked for real, no money moves), simulated feed');
  const port = await demoPort();
  const base = `http://127.0.0.1:${port}`;
  const serveArgs = [
    'serve',
    '--host',
    '127.0.0.1',
    '--port',
    String(port),
    '--base-url',
    base,
    '--data-dir',
    join(dir, 'data'),
    '--payment-mode',
    'mock',
    '--feed',
    'sim',
    '--sim-speed',
    String(SIM_SPEED),
    '--poll-interval-ms',
    '500',
    '--log-level',
    'warn',
  ];
  say(`      $ isocast ${serveArgs.join(' ')}`);
  const simStart = Date.now();
  server = spawn(process.execPath, [MAIN, ...serveArgs], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? '' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const health = await until(
    '/health',
    async () => {
      const h = await getJson(base, '/health');
      return h.status === 200 ? h.body : null;
    },
    15_000,
    100,
  );
  show(`GET /health -> ok=${health.ok} service=${health.service} mode=${health.mode}`);

  step('A throwaway wallet (its key stays in a 0600 file in the temp dir)');
  const key = generatePrivateKey();
  const keyFile = join(dir, 'wallet.key');
  writeFileSync(keyFile, `${key}\n`, { mode: 0o600 });
  const wallet = privateKeyToAccount(key).address;
  show(`address ${wallet}`);

  step('Free endpoints: no payment, no key');
  const cities = (await getJson(base, '/v1/cities')).body;
  show(
    `GET /v1/cities -> ${cities.count} cities, e.g. ${cities.cities
      .slice(0, 4)
      .map((c: any) => `${c.slug} (°${c.unit}, ${c.timezone})`)
      .join(', ')}`,
  );
  const lows = (await getJson(base, '/v1/cities?kind=low')).body;
  show(
    `GET /v1/cities?kind=low -> ${lows.count} daily-low streams, e.g. ${lows.cities
      .slice(0, 2)
      .map((c: any) => c.slug)
      .join(', ')} (listed only on request; bought like a city)`,
  );
  const meta = (await getJson(base, '/v1/signals/meta')).body;
  show(
    `GET /v1/signals/meta -> ${meta.currency} on ${meta.network}; tiers ${meta.tiers.map((t: any) => `${t.name} ${t.minCount}+ @ ${t.unitPriceUsd}`).join(', ')}`,
  );
  const sample = (await getJson(base, '/v1/sample')).body;
  show(
    `GET /v1/sample -> ${sample.synthetic ? 'synthetic' : 'real'} example: ${sample.displayName} ${sample.old.bucket} -> ${sample.new.bucket}, odds for ${sample.buckets.length} buckets`,
  );
  const x402 = (await getJson(base, '/.well-known/x402')).body;
  show(`GET /.well-known/x402 -> paid resources ${x402.resources.join(', ')}`);
  const llms = await (await fetch(`${base}/llms.txt`)).text();
  show(
    `GET /llms.txt -> ${llms
      .split('\n')
      .find((l) => l.startsWith('> '))!
      .slice(2, 110)}...`,
  );
  show(`also: /openapi.json, /api, /llms-full.txt, /discovery, /.well-known/agent-card.json`);

  step('Pick a city whose simulated morning is warming up (crossings are coming)');
  const simNow = () => simStart + (Date.now() - simStart) * SIM_SPEED;
  // The city already in its crossing stretch (or the one that gets there soonest), so signals
  // follow the purchase within seconds.
  const wait = (h: number) => (h >= CROSSINGS_FROM_H && h <= CROSSINGS_UNTIL_H ? 0 : (CROSSINGS_FROM_H - h + 24) % 24);
  const ranked = (cities.cities as any[])
    .map((c) => ({ c, h: hourIn(c.timezone, simNow()) }))
    .sort((a, b) => wait(a.h) - wait(b.h) || Math.abs(a.h - 10) - Math.abs(b.h - 10));
  const pick = ranked[0]!;
  const city = pick.c.slug as string;
  const hhmm = (h: number) => `${Math.floor(h)}:${String(Math.floor((h % 1) * 60)).padStart(2, '0')}`;
  show(`${pick.c.displayName} (${city}): simulated local time ${hhmm(pick.h)}, latest seq ${pick.c.latestSeq}`);

  step('The 402 challenge: what a stock x402 client sees, plus the binding salt it must use');
  const challenge = await getJson(base, `/v1/subscribe?city=${city}&count=20`, { method: 'POST' });
  const a = challenge.body.accepts[0];
  show(
    `POST /v1/subscribe?city=${city}&count=20 -> ${challenge.status}: ${a.price} (${a.maxAmountRequired} atomic USDC) to ${a.payTo}\n` +
      `nonce must be ${a.extra.binding.formula}\nsalt ${a.extra.binding.salt}`,
  );

  step('Buy a Starter bundle (20 signals) with the CLI: bind the nonce, sign EIP-3009, pay');
  const receipts = join(dir, 'receipts.json');
  const common = ['--server', base, '--receipts', receipts];
  const bought = await cli(['buy', '--city', city, '--count', '20', '--key-file', keyFile, ...common], {});
  if (bought.code !== 0) throw new Error('buy failed');
  const saved = JSON.parse(readFileSync(receipts, 'utf8')).receipts[0];

  step(`Wait for new ${city} signals (the bundle covers the next 20; no backlog is sold)`);
  const waitStart = Date.now();
  let lastNote = waitStart;
  const latest = await until(
    `new ${city} signals`,
    async () => {
      const seq = (await getJson(base, `/v1/cities/${city}`)).body.city.latestSeq as number;
      if (seq > saved.latestSeq + 1) return seq;
      if (Date.now() - lastNote >= 2_000) {
        lastNote = Date.now();
        show(
          `... ${((Date.now() - waitStart) / 1000).toFixed(0)} s: ${city} simulated ${hhmm(hourIn(pick.c.timezone, simNow()))}, latest seq ${seq}`,
        );
      }
      return null;
    },
    Math.max(5_000, BUDGET_MS - (Date.now() - started) - 12_000),
    250,
  );
  show(`latest seq ${saved.latestSeq} -> ${latest}`);

  step('Read them with the receipt');
  await cli(['read', '--city', city, ...common], {});

  step(
    `Past the end of the bundle (as if all ${saved.paidThroughSeq - saved.latestSeq} had been read): the exhaustion 402`,
  );
  await cli(['read', '--city', city, '--since', String(saved.paidThroughSeq), ...common], {});
  const raw = await getJson(base, `/v1/signals?city=${city}&since=${saved.paidThroughSeq}`, {
    headers: { authorization: `Bearer ${saved.receiptToken}` },
  });
  show(
    `raw GET /v1/signals?city=${city}&since=${saved.paidThroughSeq} -> ${raw.status}, paid_through ${raw.body.paid_through}, latest ${raw.body.latest}, ` +
      `a fresh challenge for ${raw.body.accepts[0].price}`,
  );
}

async function stop(): Promise<void> {
  if (server && server.exitCode === null) {
    const exited = new Promise<void>((resolve) => server!.once('exit', () => resolve()));
    server.kill('SIGTERM');
    const force = setTimeout(() => server?.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(force);
  }
  rmSync(dir, { recursive: true, force: true });
}

process.on('SIGINT', () => {
  void stop().then(() => process.exit(130));
});
const watchdog = setTimeout(() => {
  say(`\ndemo: over ${BUDGET_MS / 1000} s, giving up`);
  void stop().then(() => process.exit(1));
}, BUDGET_MS + 3_000);
try {
  await demo();
  step('Stop the instance and remove the temp directory');
  await stop();
  say(`\ndone in ${((Date.now() - started) / 1000).toFixed(1)} s; nothing left running.`);
} catch (err) {
  say(`\ndemo failed: ${err instanceof Error ? err.message : String(err)}`);
  await stop();
  process.exitCode = 1;
} finally {
  clearTimeout(watchdog);
}
