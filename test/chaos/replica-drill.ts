import Database from 'better-sqlite3';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { keccak256, toHex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { payFor402 } from '../../packages/isocast-client/src/index.ts';
import { describePosition, killTree, replicaPosition, walSalt } from './machine-loss.ts';
import { startServer } from './server.ts';
import { compileCacheEnv } from '../helpers/child-env.ts';

/**
 * The restore drill: purchases run against a real `serve` that replicates to a local directory
 * with the real Litestream; the whole process tree is SIGKILLed at once (a machine dying:
 * Litestream gets no final sync either); the data directory is deleted; `isocast restore` brings
 * the database back from the replica; `serve` starts on it. Checked: every payment the replica
 * held at the kill (machine-loss.ts replicaPosition: answered before it) is in the restored ledger
 * and applied exactly once (its X-Payment sent again answers `idempotent: true`); what the restore
 * lacks is only what the replica never received, however long the lag was on a loaded machine;
 * entitlements equal the sum of the applied payments; each stream's restored signals are the
 * first of the stopped database's. Shared by test/replication/drill.test.ts and `npm run chaos`.
 */
const ROOT = join(import.meta.dirname, '..', '..');
export const LITESTREAM = join(ROOT, 'node_modules', '@flydotio', 'litestream-linux-x64', 'litestream');
const NODE = join(ROOT, 'node_modules', '.bin', 'node');
const MAIN = join(ROOT, 'src', 'main.ts');
export const SYNC_INTERVAL_MS = 1_000;
const SECRET = 'ab'.repeat(32);

export type DrillReport = {
  /** Purchases answered 200 (applied now) before the kill. */
  committed: number;
  /** Of those, answered before the replica provably held them (replica-position.ts heldUntil). */
  heldByReplica: number;
  /** Applied payments in the restored database. */
  restored: number;
  /** Payments the replica held that the restore lacks: a real loss, must be 0. */
  lostHeld: number;
  /** Payments answered after the replica's position that the restore lacks: the lag at the kill (allowed). */
  lostUnreplicated: number;
  /** Of those, answered more than the sync interval before the kill (the lag outgrew the interval). */
  lostOlderThanInterval: number;
  /** Re-sent payments applied a second time, or entitlements above their payments: must be 0. */
  doubled: number;
  entitlementsEqual: boolean;
  /** Every stream's restored signals are the first of the stopped database's, row for row. */
  signalsEqual: boolean;
  signals: number;
  /** WAL restarts seen while the load ran: Litestream's checkpoints did run. */
  walRestarts: number;
  /** The replica's last files against the kill. */
  replica: string;
  restoreMs: number;
  problems: string[];
};

export type Bought = {
  xPayment: string;
  payer: string;
  nonce: string;
  city: string;
  count: number;
  answeredAt: number;
};

/**
 * Buyers purchasing in a loop until `stop`: each purchase a distinct authorization (a count of its
 * own), recorded when the server answers that it applied it now. A failed request is reported and
 * the buyer goes on with the next purchase (an earlier version stopped the buyer, and one reset
 * on a loaded machine silently shrank the load).
 */
export function purchaseLoad(o: {
  baseUrl: string;
  cities: string[];
  buyers: number;
  seed: string;
  stop: AbortSignal;
  onBought(b: Bought): void;
  onError(message: string): void;
}): Promise<void> {
  const buyer = async (b: number) => {
    const account = privateKeyToAccount(keccak256(toHex(`isocast-drill-${o.seed}-${b}`)));
    for (let i = 0; !o.stop.aborted; i++) {
      const city = o.cities[i % o.cities.length]!;
      const count = 2 + i;
      const url = `${o.baseUrl}/v1/subscribe?city=${city}&count=${count}`;
      try {
        const ask = await fetch(url, { method: 'POST', signal: o.stop });
        const challenge = await ask.json();
        if (ask.status !== 402) {
          o.onError(`challenge answered ${ask.status}: ${JSON.stringify(challenge).slice(0, 160)}`);
          continue;
        }
        const p = await payFor402(challenge, account, { expect: { city, count } });
        const res = await fetch(url, { method: 'POST', headers: { 'x-payment': p.xPayment }, signal: o.stop });
        const body = (await res.json()) as { idempotent?: boolean };
        if (res.status === 200 && body.idempotent === false)
          o.onBought({
            xPayment: p.xPayment,
            payer: p.payer.toLowerCase(),
            nonce: p.nonce,
            city,
            count,
            answeredAt: Date.now(),
          });
      } catch (err) {
        if (o.stop.aborted) return;
        // A reset or a slow answer on a loaded machine: that purchase is not counted, the buyer goes on.
        o.onError(`buyer ${b}: ${(err as Error).message}`);
        await sleep(200);
      }
    }
  };
  return Promise.all(Array.from({ length: o.buyers }, (_, b) => buyer(b))).then(() => {});
}

export function drillEnv(replicaDir: string): Record<string, string> {
  return {
    PAYMENT_MODE: 'mock',
    FEED: 'sim',
    SIM_SPEED: '600',
    POLL_INTERVAL_MS: '1000',
    SERVER_SECRET: SECRET,
    REPLICA_URL: replicaDir,
    REPLICA_SYNC_INTERVAL_MS: String(SYNC_INTERVAL_MS),
    LITESTREAM_BIN: LITESTREAM,
    RATE_LIMIT_ADDRESS_PER_MIN: '0',
    RATE_LIMIT_WALLET_PER_MIN: '0',
  };
}

export async function runReplicaDrill(opts: {
  root: string;
  loadMs: number;
  /** The load goes on past loadMs until this many purchases were answered (at most maxLoadMs). */
  minPurchases?: number;
  maxLoadMs?: number;
  buyers?: number;
  log?: (line: string) => void;
}): Promise<DrillReport> {
  const log = opts.log ?? (() => {});
  const dataDir = join(opts.root, 'data');
  const replicaDir = join(opts.root, 'replica');
  mkdirSync(dataDir, { recursive: true });
  const env = drillEnv(replicaDir);
  const problems: string[] = [];
  let server = await startServer({ dataDir, env, readyTimeoutMs: 60_000 });
  const citiesBody = (await (await fetch(`${server.baseUrl}/v1/cities`)).json()) as { cities: { slug: string }[] };
  const cities = citiesBody.cities.map((c) => c.slug).slice(0, 6);

  const bought: Bought[] = [];
  const stop = new AbortController();
  let killed = false;
  const load = purchaseLoad({
    baseUrl: server.baseUrl,
    cities,
    buyers: opts.buyers ?? 4,
    seed: opts.root,
    stop: stop.signal,
    onBought: (b) => bought.push(b),
    onError: (m) => {
      if (!killed) log(m);
    },
  });

  // Litestream's checkpoints restart the WAL under the load: its header's salt changes each time.
  let walRestarts = 0;
  let salt = walSalt(join(dataDir, 'isocast.db-wal'));
  const watch = setInterval(() => {
    const s = walSalt(join(dataDir, 'isocast.db-wal'));
    if (s && salt && s !== salt) walRestarts++;
    salt = s ?? salt;
  }, 20);
  // A shared 2-core machine can be slow: the load runs until enough purchases are answered.
  const loadStart = Date.now();
  while (Date.now() - loadStart < opts.loadMs || bought.length < (opts.minPurchases ?? 0)) {
    if (Date.now() - loadStart > (opts.maxLoadMs ?? opts.loadMs * 4)) break;
    await sleep(100);
  }
  const loadMs = Date.now() - loadStart;
  const killAt = Date.now();
  killed = true;
  await killTree(server);
  stop.abort();
  clearInterval(watch);
  await load;
  log(
    `killed after ${loadMs} ms of load (the kill took ${Date.now() - killAt} ms): ${bought.length} purchases answered`,
  );
  const position = replicaPosition(replicaDir);
  const replica = describePosition(position, killAt, 'the kill');
  log(replica);

  // The dead machine's database, read before it is deleted: what had been committed.
  const before = new Database(join(dataDir, 'isocast.db'), { readonly: true });
  const sigQuery = 'SELECT city, seq, new_bucket, created_at FROM signals ORDER BY city, seq';
  const origSignals = before.prepare(sigQuery).all() as { city: string; seq: number }[];
  before.close();
  rmSync(dataDir, { recursive: true, force: true });

  const started = performance.now();
  const restore = spawnSync(NODE, [MAIN, 'restore'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', ...compileCacheEnv(), DATA_DIR: dataDir, ...env },
    encoding: 'utf8',
  });
  const restoreMs = performance.now() - started;
  if (restore.status !== 0) problems.push(`restore exited ${restore.status}: ${restore.stderr.slice(-400)}`);
  log(restore.stdout.trim());

  const db = new Database(join(dataDir, 'isocast.db'), { readonly: true });
  const applied = new Set(
    (
      db.prepare("SELECT payer, nonce FROM payments WHERE status = 'applied'").all() as {
        payer: string;
        nonce: string;
      }[]
    ).map((r) => `${r.payer.toLowerCase()}|${r.nonce}`),
  );
  const isRestored = (b: Bought) => applied.has(`${b.payer}|${b.nonce}`);
  // A payment is answered after its commit: answered before heldUntil, the replica had it.
  const held = bought.filter((b) => b.answeredAt < position.heldUntil);
  const lost = bought.filter((b) => !isRestored(b));
  for (const b of lost)
    log(
      `not restored: answered ${killAt - b.answeredAt} ms before the kill, ${b.answeredAt < position.heldUntil ? 'BEFORE' : `${Math.round(b.answeredAt - position.heldUntil)} ms after`} the replica's position`,
    );
  // Applied exactly once: each wallet-city's entitlement is the sum of its applied payments' counts.
  const mismatched = db
    .prepare(
      `SELECT e.wallet, e.city, e.total_paid_signals AS total, coalesce(sum(p.count), 0) AS paid
         FROM entitlements e LEFT JOIN payments p
           ON lower(p.payer) = e.wallet AND p.city = e.city AND p.status = 'applied'
        GROUP BY e.wallet, e.city HAVING total != paid`,
    )
    .all();
  const restoredSignals = db.prepare(sigQuery).all() as { city: string; seq: number }[];
  db.close();
  // A restore is the database as of one commit: per stream, the first signals, none altered.
  const byCity = (rows: { city: string }[]) =>
    Map.groupBy(
      rows.map((r) => [r.city, JSON.stringify(r)] as const),
      ([c]) => c,
    );
  const orig = byCity(origSignals);
  const signalsEqual = [...byCity(restoredSignals)].every(([city, rows]) =>
    rows.every(([, row], i) => orig.get(city)?.[i]?.[1] === row),
  );
  let doubled = mismatched.length;

  // Back in service on the restored database, every buyer sends its payment again: one the
  // restore holds answers "already applied" (never applied twice); one it lacks is new to it.
  server = await startServer({ dataDir, env, readyTimeoutMs: 60_000 });
  for (const b of bought) {
    const res = await fetch(`${server.baseUrl}/v1/subscribe?city=${b.city}&count=${b.count}`, {
      method: 'POST',
      headers: { 'x-payment': b.xPayment },
    });
    const body = (await res.json()) as { idempotent?: boolean; error?: string; reason?: string };
    const answer = `${res.status} idempotent=${body.idempotent}${body.error ? ` ${body.error}` : ''}${body.reason ? ` (${body.reason})` : ''}`;
    if (!isRestored(b)) {
      log(`not restored, sent again: ${answer}`);
      continue;
    }
    if (res.status !== 200 || body.idempotent !== true) {
      doubled++;
      if (problems.length < 5) problems.push(`re-sent restored payment answered ${answer}`);
    }
  }
  await server.kill('SIGTERM');
  const lostHeld = lost.filter((b) => b.answeredAt < position.heldUntil).length;
  if (lostHeld > 0) problems.push(`${lostHeld} payments the replica held are not restored`);
  return {
    committed: bought.length,
    heldByReplica: held.length,
    restored: applied.size,
    lostHeld,
    lostUnreplicated: lost.length - lostHeld,
    lostOlderThanInterval: lost.filter((b) => b.answeredAt < killAt - SYNC_INTERVAL_MS).length,
    doubled,
    entitlementsEqual: mismatched.length === 0,
    signalsEqual,
    signals: restoredSignals.length,
    walRestarts,
    replica,
    restoreMs,
    problems,
  };
}

export function drillLine(r: DrillReport): string {
  return (
    `restore drill: ${r.committed} payments committed (${r.heldByReplica} before the replica's position), ${r.restored} restored, ` +
    `lost though replicated ${r.lostHeld}, not yet replicated ${r.lostUnreplicated} (${r.lostOlderThanInterval} of them answered more than ${SYNC_INTERVAL_MS} ms before the kill), doubled ${r.doubled}, ` +
    `entitlements ${r.entitlementsEqual ? 'equal' : 'DIFFER'}, signals ${r.signalsEqual ? 'equal' : 'DIFFER'} (${r.signals}), ` +
    `${r.walRestarts} WAL restarts under load, restore ${Math.round(r.restoreMs)} ms`
  );
}

export const hasLitestream = () => existsSync(LITESTREAM);
