import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { keccak256, stringToHex } from 'viem';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { payFor402 } from '../../packages/isocast-client/src/index.ts';
import { openDb } from '../../src/db/open.ts';
import { startServer as spawnServe } from '../../test/chaos/server.ts';
import { insertSignals } from '../../test/helpers/signals.ts';
import type { AttackCase, AttackContext, AttackServer, HttpAnswer, ServerOptions } from './types.ts';

/**
 * What the runner (scripts/attack.ts) and the fast test (test/attack/fast.test.ts) share: finding
 * the case modules, one real `serve` per module (test/chaos/server.ts starts it), a context per
 * case, and the table.
 */
export const SEEDED_CITY = 'nyc';
export const SEEDED_SIGNALS = 5;
const DIR = import.meta.dirname;

/** The defaults every attack server runs with: mock payments, the sim feed left idle. */
const BASE_ENV: Record<string, string> = {
  PAYMENT_MODE: 'mock',
  FEED: 'sim',
  POLL_INTERVAL_MS: '3600000',
  LOG_LEVEL: 'warn',
};

export type CaseModule = { name: string; cases: AttackCase[] };

/** Every `scripts/attack/*.ts` that exports `cases`, by file name. */
export async function loadModules(only?: string[]): Promise<CaseModule[]> {
  const out: CaseModule[] = [];
  for (const file of readdirSync(DIR).sort()) {
    if (!file.endsWith('.ts')) continue;
    const name = file.slice(0, -3);
    if (only && only.length > 0 && !only.includes(name)) continue;
    const mod = (await import(pathToFileURL(join(DIR, file)).href)) as { cases?: AttackCase[] };
    if (Array.isArray(mod.cases)) out.push({ name, cases: mod.cases });
  }
  return out;
}

export function account(label: string): PrivateKeyAccount {
  return privateKeyToAccount(keccak256(stringToHex(`isocast-attack:${label}`)));
}

/** A real server in a fresh temp DATA_DIR, its seeded signals written before it starts. */
export async function startAttackServer(
  env: Record<string, string> = {},
  opts: ServerOptions = {},
): Promise<AttackServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'isocast-attack-'));
  const seed = opts.seedSignals ?? SEEDED_SIGNALS;
  if (seed > 0) {
    const db = openDb(join(dataDir, 'isocast.db'));
    insertSignals(db, SEEDED_CITY, seed);
    db.close();
  }
  let proc: Awaited<ReturnType<typeof spawnServe>>;
  try {
    proc = await spawnServe({ dataDir, env: { ...BASE_ENV, ...env } });
  } catch (err) {
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  let stopped: Promise<void> | null = null;
  return {
    baseUrl: proc.baseUrl,
    dataDir,
    pid: proc.pid,
    stop: () =>
      (stopped ??= (async () => {
        const killer = setTimeout(() => void proc.kill('SIGKILL'), 5_000);
        await proc.kill('SIGTERM');
        clearTimeout(killer);
        rmSync(dataDir, { recursive: true, force: true });
      })()),
  };
}

export async function http(base: string, path: string, init: RequestInit = {}): Promise<HttpAnswer> {
  const res = await fetch(`${base}${path}`, { signal: AbortSignal.timeout(10_000), ...init });
  const text = await res.text();
  let json: any = null;
  try {
    json = JSON.parse(text);
  } catch {
    json = null;
  }
  return { status: res.status, headers: res.headers, json, text };
}

/** The shared server of one module and the way to run its cases. */
export async function moduleSession(): Promise<{
  server: AttackServer;
  run(c: AttackCase): Promise<CaseOutcome>;
  close(): Promise<void>;
}> {
  const server = await startAttackServer();
  await warmUp(server.baseUrl);
  return {
    server,
    run: (c) => runCase(c, server),
    close: () => server.stop(),
  };
}

/**
 * One throwaway purchase first, so no case pays for the first paid request's one-time costs
 * (the server's lazily loaded crypto, viem's first signature here): cases stay under 3 s.
 */
async function warmUp(base: string): Promise<void> {
  const path = `/v1/subscribe?city=${SEEDED_CITY}&count=2`;
  const challenge = await http(base, path, { method: 'POST' });
  const p = await payFor402(challenge.json, account('warm-up'), { nowMs: Date.now() });
  const bought = await http(base, path, { method: 'POST', headers: { 'x-payment': p.xPayment } });
  if (bought.status !== 200)
    throw new Error(`warm-up purchase answered ${bought.status}: ${bought.text.slice(0, 200)}`);
}

export type CaseOutcome = { observed: string; ok: boolean; ms: number };

/** Runs one case; a throw is a failed case whose message is the observation. Extra servers stop after it. */
export async function runCase(c: AttackCase, shared: AttackServer): Promise<CaseOutcome> {
  const extra: AttackServer[] = [];
  const ctx: AttackContext = {
    baseUrl: shared.baseUrl,
    dataDir: shared.dataDir,
    origin: new URL(shared.baseUrl).origin,
    city: SEEDED_CITY,
    seededSignals: SEEDED_SIGNALS,
    accounts: { victim: account('victim'), attacker: account('attacker') },
    account,
    startServer: async (env, opts) => {
      const s = await startAttackServer(env, opts);
      extra.push(s);
      return s;
    },
    http: (path, init = {}) => {
      const { base, ...rest } = init;
      return http(base ?? shared.baseUrl, path, rest);
    },
  };
  const t0 = performance.now();
  try {
    const r = await c.run(ctx);
    return { ...r, ms: performance.now() - t0 };
  } catch (err) {
    return { observed: `threw: ${(err as Error).message}`, ok: false, ms: performance.now() - t0 };
  } finally {
    await Promise.all(extra.map((s) => s.stop()));
  }
}

export type Row = { module: string; name: string; expected: string; observed: string; ok: boolean; ms: number };

/** `case | expected | observed | ok` as a Markdown table (pipes in cells escaped). */
export function formatTable(rows: Row[]): string {
  const cell = (s: string) => s.replaceAll('|', '\\|').replaceAll('\n', ' ');
  const lines = ['| case | expected | observed | ok |', '|---|---|---|---|'];
  for (const r of rows)
    lines.push(
      `| ${cell(`${r.module}: ${r.name}`)} | ${cell(r.expected)} | ${cell(r.observed)} | ${r.ok ? 'yes' : 'NO'} |`,
    );
  return lines.join('\n');
}
