/**
 * Replication lag under a purchase load (issue 26; docs/operations.md, "Durability"): what a
 * machine dying at a random instant would cost, measured per payment from the outside.
 *
 * A real `serve` (mock payments, the sim feed) replicates with the real Litestream to a directory
 * while `buyers` purchase for `seconds`. Litestream's file replica writes every snapshot and WAL
 * segment to `<name>.tmp` and renames it into place, and the rename sets the file's ctime: the
 * ctime of each file is the instant the replica came to hold it. After the load (and a short
 * drain so the last commits get their regular upload, then a normal stop), the replica as it was
 * after each file's arrival is rebuilt offline from hard links (the files up to that one) and
 * restored with `litestream restore`. A payment's lag is
 *
 *   (ctime of the first file whose prefix of the replica restores it as applied)
 *     - (its row's updated_at when it became applied: set inside the committing transaction)
 *
 * so the commit is at or after the start of the interval and the figure errs long by the few
 * milliseconds a group commit takes. A machine lost at instant T loses exactly the payments
 * committed before T whose lag exceeds T minus their commit: the lag distribution is the RPO.
 * Also: the time from the buyer's 200 to the replica, and the server's own
 * isocast_replication_lag_seconds gauge sampled each second, to compare with the outside view.
 *
 * node scripts/bench/replication.ts '{"seconds":20,"buyers":8}'  (npm run bench -- --only replication)
 * Prints one JSON document. Bounded: `seconds` at most 120, the whole run at most 4 minutes.
 */
import Database from 'better-sqlite3';
import { spawn } from 'node:child_process';
import { linkSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startServer, type ServerProcess } from '../../test/chaos/server.ts';
import { drillEnv, LITESTREAM, purchaseLoad, SYNC_INTERVAL_MS, type Bought } from '../../test/chaos/replica-drill.ts';

const input = JSON.parse(process.argv[2] ?? '{}') as { seconds?: number; buyers?: number };
const seconds = Math.min(120, Math.max(5, input.seconds ?? 20));
const buyers = input.buyers ?? 8;
const DRAIN_MS = 3 * SYNC_INTERVAL_MS;
const WHOLE_RUN_MS = 240_000;

const root = mkdtempSync(join(tmpdir(), 'isocast-rpo-'));
let server: ServerProcess | null = null;
const watchdog = setTimeout(async () => {
  process.stderr.write(`replication bench: still running after ${WHOLE_RUN_MS / 1000} s; stopped\n`);
  await server?.kill('SIGKILL');
  rmSync(root, { recursive: true, force: true });
  process.exit(1);
}, WHOLE_RUN_MS);

const dataDir = join(root, 'data');
const replica = join(root, 'replica');
mkdirSync(dataDir);
const token = 'm'.repeat(40);
const env = { ...drillEnv(replica), ADMIN_TOKEN: token };
const load0 = loadavg();
server = await startServer({ dataDir, env, readyTimeoutMs: 90_000 });
const base = server.baseUrl;
const cities = (
  (await (await fetch(`${base}/v1/cities`, { signal: AbortSignal.timeout(10_000) })).json()) as {
    cities: { slug: string }[];
  }
).cities
  .map((c) => c.slug)
  .slice(0, 6);

const bought: Bought[] = [];
const errors: string[] = [];
const stop = new AbortController();
const loadStart = Date.now();
const load = purchaseLoad({
  baseUrl: base,
  cities,
  buyers,
  seed: root,
  stop: stop.signal,
  onBought: (b) => bought.push(b),
  onError: (m) => {
    if (!stop.signal.aborted && errors.length < 20) errors.push(m);
  },
});
const gauge: number[] = [];
while (Date.now() - loadStart < seconds * 1000) {
  await sleep(1_000);
  try {
    const res = await fetch(`${base}/metrics`, {
      headers: { authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout(2_000),
    });
    const g = /^isocast_replication_lag_seconds (\S+)$/m.exec(await res.text());
    if (g) gauge.push(Number(g[1]) * 1000);
  } catch {
    /* a slow scrape is a missing sample, not a failed run */
  }
}
stop.abort();
await load;
const loadMs = Date.now() - loadStart;
const load1 = loadavg();
// Every commit gets its regular upload before the stop's final sync.
await sleep(DRAIN_MS);
await server.kill('SIGTERM');
server = null;

// Applied payments: commit time (updated_at, ms) by id, and what the buyer was told.
const final = new Database(join(dataDir, 'isocast.db'), { readonly: true });
const rows = final
  .prepare("SELECT id, lower(payer) AS payer, nonce, updated_at AS at FROM payments WHERE status = 'applied'")
  .all() as { id: number; payer: string; nonce: string; at: number }[];
final.close();
const answeredAt = new Map(bought.map((b) => [`${b.payer}|${b.nonce}`, b.answeredAt]));

// The replica's files in the order they arrived.
const files: { rel: string; at: number }[] = [];
const walk = (dir: string) => {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) walk(p);
    else if (!e.name.endsWith('.tmp')) files.push({ rel: relative(replica, p), at: statSync(p).ctimeMs });
  }
};
walk(replica);
files.sort((a, b) => a.at - b.at || a.rel.localeCompare(b.rel));
const generations = new Set(files.map((f) => f.rel.split('/')[1]));
if (generations.size !== 1) throw new Error(`expected one generation, found ${generations.size}`);

// Each prefix of the replica restored (two at a time): the first that holds a payment gives its arrival.
const restoreMs: number[] = [];
const states = join(root, 'states');
let restoreFailures = 0;
const holds: (number[] | null)[] = files.map(() => null);
const restoreState = async (k: number) => {
  const dir = join(states, String(k));
  for (const f of files.slice(0, k + 1)) {
    mkdirSync(join(dir, f.rel, '..'), { recursive: true });
    linkSync(join(replica, f.rel), join(dir, f.rel));
  }
  const out = join(root, `state-${k}.db`);
  const began = performance.now();
  const code = await new Promise<number | null>((resolve) => {
    const p = spawn(LITESTREAM, ['restore', '-o', out, `file://${dir}`], { stdio: 'ignore' });
    p.on('error', () => resolve(null));
    p.on('exit', (c) => resolve(c));
  });
  restoreMs.push(performance.now() - began);
  rmSync(dir, { recursive: true, force: true });
  if (code !== 0) {
    restoreFailures++;
    return;
  }
  const db = new Database(out, { readonly: true });
  holds[k] = db.prepare("SELECT id FROM payments WHERE status = 'applied'").pluck().all() as number[];
  db.close();
  for (const s of ['', '-wal', '-shm']) rmSync(out + s, { force: true });
};
const todo = files.flatMap((f, k) => (f.rel.endsWith('.wal.lz4') ? [k] : []));
await Promise.all(
  [0, 1].map(async () => {
    for (let k = todo.shift(); k !== undefined; k = todo.shift()) await restoreState(k);
  }),
);
const arrival = new Map<number, number>();
for (let k = 0; k < files.length; k++)
  for (const id of holds[k] ?? []) if (!arrival.has(id)) arrival.set(id, files[k]!.at);

const commitLag: number[] = [];
const answeredLag: number[] = [];
let never = 0;
for (const r of rows) {
  const at = arrival.get(r.id);
  if (at === undefined) {
    never++;
    continue;
  }
  commitLag.push(at - r.at);
  const told = answeredAt.get(`${r.payer}|${r.nonce}`);
  if (told !== undefined) answeredLag.push(at - told);
}

const pct = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const q = (p: number) => (s.length === 0 ? null : Math.round(s[Math.min(s.length - 1, Math.floor(p * s.length))]!));
  return { n: s.length, p50: q(0.5), p90: q(0.9), p99: q(0.99), max: s.length ? Math.round(s.at(-1)!) : null };
};
rmSync(root, { recursive: true, force: true });
clearTimeout(watchdog);
process.stdout.write(
  `${JSON.stringify({
    syncIntervalMs: SYNC_INTERVAL_MS,
    replica: 'file (local directory)',
    buyers,
    loadSeconds: Math.round(loadMs / 100) / 10,
    purchasesAnswered: bought.length,
    purchasesPerSec: Math.round((bought.length / loadMs) * 10_000) / 10,
    appliedPayments: rows.length,
    neverOnReplica: never,
    replicaFiles: files.length,
    restoresOfReplicaStates: restoreMs.length,
    restoreFailures,
    lagFromCommitMs: pct(commitLag),
    lagFromAnswerMs: pct(answeredLag),
    serverGaugeMs: pct(gauge),
    restoreOfStateMs: pct(restoreMs),
    loadAverageAtStart: load0.map((x) => Math.round(x * 100) / 100),
    loadAverageAtEnd: load1.map((x) => Math.round(x * 100) / 100),
    buyerErrors: errors.slice(0, 5),
  })}\n`,
);
