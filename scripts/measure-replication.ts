import Database from 'better-sqlite3';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { startServer } from '../test/chaos/server.ts';
import { drillEnv, LITESTREAM, purchaseLoad, SYNC_INTERVAL_MS, type Bought } from '../test/chaos/replica-drill.ts';

/**
 * `node scripts/measure-replication.ts [--seconds 60] [--buyers 8]`: the replication lag a
 * machine loss would cost, measured from the outside (docs/operations.md, "Durability"). A real
 * `serve` (mock payments) replicates to a local directory with the real Litestream while buyers
 * purchase; about once a second the replica is restored into a scratch file and compared with
 * what the buyers were told: the sample is the age, at the end of that restore, of the oldest
 * purchase answered before the restore began and missing from it (0 when none is missing). That
 * is the data a machine dying at that instant would lose. Also printed: the server's own
 * isocast_replication_lag_seconds gauge, sampled the same way, to compare.
 */
const { values } = parseArgs({
  options: { seconds: { type: 'string', default: '60' }, buyers: { type: 'string', default: '8' } },
});
const seconds = Number(values.seconds);
const root = mkdtempSync(join(tmpdir(), 'isocast-rpo-'));
const dataDir = join(root, 'data');
mkdirSync(dataDir);
const token = 'm'.repeat(40);
const env = { ...drillEnv(join(root, 'replica')), ADMIN_TOKEN: token };
const server = await startServer({ dataDir, env, readyTimeoutMs: 120_000 });
const cities = ((await (await fetch(`${server.baseUrl}/v1/cities`)).json()) as { cities: { slug: string }[] }).cities
  .map((c) => c.slug)
  .slice(0, 6);
const bought: Bought[] = [];
const stop = new AbortController();
const load = purchaseLoad({
  baseUrl: server.baseUrl,
  cities,
  buyers: Number(values.buyers),
  seed: root,
  stop: stop.signal,
  onBought: (b) => bought.push(b),
  onError: () => {},
});

const rpo: number[] = [];
const gauge: number[] = [];
const restoreMs: number[] = [];
const end = Date.now() + seconds * 1000;
await sleep(2_000);
while (Date.now() < end) {
  const began = Date.now();
  const answered = bought.filter((b) => b.answeredAt < began);
  const out = join(root, `r-${began}.db`);
  const r = spawnSync(
    LITESTREAM,
    ['restore', '-config', join(dataDir, 'litestream.yml'), '-no-expand-env', '-o', out, join(dataDir, 'isocast.db')],
    { encoding: 'utf8' },
  );
  const finished = Date.now();
  if (r.status !== 0) {
    process.stderr.write(`restore failed: ${r.stderr.slice(-300)}\n`);
    continue;
  }
  restoreMs.push(finished - began);
  const db = new Database(out, { readonly: true });
  const applied = new Set(
    (
      db.prepare("SELECT payer, nonce FROM payments WHERE status = 'applied'").all() as {
        payer: string;
        nonce: string;
      }[]
    ).map((x) => `${x.payer.toLowerCase()}|${x.nonce}`),
  );
  db.close();
  for (const s of ['', '-wal', '-shm']) rmSync(out + s, { force: true });
  const missing = answered.filter((b) => !applied.has(`${b.payer}|${b.nonce}`));
  rpo.push(missing.length === 0 ? 0 : finished - Math.min(...missing.map((b) => b.answeredAt)));
  const metrics = await (
    await fetch(`${server.baseUrl}/metrics`, { headers: { authorization: `Bearer ${token}` } })
  ).text();
  const g = /^isocast_replication_lag_seconds (\S+)$/m.exec(metrics);
  if (g) gauge.push(Number(g[1]) * 1000);
  await sleep(Math.max(0, 1000 - (Date.now() - began)));
}
stop.abort();
await load;
await server.kill('SIGTERM');
rmSync(root, { recursive: true, force: true });

const q = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? Number.NaN : s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
};
const line = (name: string, xs: number[]) =>
  `${name.padEnd(34)} p50 ${q(xs, 0.5)} ms, p90 ${q(xs, 0.9)} ms, p99 ${q(xs, 0.99)} ms, max ${Math.max(...xs)} ms (${xs.length} samples)`;
process.stdout.write(
  `${bought.length} purchases in ${seconds} s (${(bought.length / seconds).toFixed(1)}/s), REPLICA_SYNC_INTERVAL_MS ${SYNC_INTERVAL_MS}, file replica\n` +
    `${line('lost if the machine died (RPO)', rpo)}\n${line('isocast_replication_lag_seconds', gauge)}\n${line('restore of the replica', restoreMs)}\n`,
);
