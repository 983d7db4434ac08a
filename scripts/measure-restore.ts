import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { openDb } from '../src/db/open.ts';
import { writeLitestreamConfig } from '../src/replication/supervisor.ts';
import { LITESTREAM } from '../test/chaos/replica-drill.ts';

/**
 * `node scripts/measure-restore.ts [--signals 1000000]`: how long `isocast restore` takes for a
 * large ledger (docs/operations.md, "Durability"). Builds a database of N signals (rows shaped as
 * the poller writes them, spread over the catalog's cities), replicates it to a local directory
 * with Litestream until its snapshot and WAL are uploaded, then restores it into an empty
 * DATA_DIR with the real command and times it (node's start, Litestream's download and WAL
 * replay, and the quick_check that `restore` runs).
 */
const { values } = parseArgs({ options: { signals: { type: 'string', default: '1000000' } } });
const n = Number(values.signals);
const root = mkdtempSync(join(tmpdir(), 'isocast-restore-'));
const src = join(root, 'src');
const replica = join(root, 'replica');
mkdirSync(src);
const dbPath = join(src, 'isocast.db');
const db = openDb(dbPath);
const cities = ['nyc', 'chicago', 'miami', 'dallas', 'seattle', 'atlanta', 'denver', 'houston', 'austin', 'boston'];
const insert = db.prepare(
  `INSERT INTO signals (city, seq, target_date, new_bucket, observed_at, payload, created_at, reported_at)
   VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
);
let t = performance.now();
const perCity = Math.ceil(n / cities.length);
db.transaction(() => {
  for (let i = 0; i < n; i++) {
    const city = cities[i % cities.length]!;
    const seq = Math.floor(i / cities.length) + 1;
    const day = new Date(Date.UTC(2000, 0, 1) + Math.floor(seq / 4) * 86_400_000).toISOString().slice(0, 10);
    const at = new Date(Date.UTC(2000, 0, 1) + seq * 21_600_000).toISOString();
    const payload = JSON.stringify({
      city,
      seq,
      targetDate: day,
      newBucket: `${60 + (seq % 4) * 2}-${61 + (seq % 4) * 2}°F`,
      observedHighF: 60 + (seq % 4) * 2,
      observedAt: at,
      buckets: [{ label: `${60 + (seq % 4) * 2}-${61 + (seq % 4) * 2}°F`, price: 0.42 }],
    });
    insert.run(city, seq, day, `b${seq % 4}-${seq}`, at, payload, Date.parse(at), at);
  }
})();
db.pragma('wal_checkpoint(TRUNCATE)');
db.close();
const size = statSync(dbPath).size;
process.stdout.write(
  `built ${n} signals (${perCity} per city) in ${((performance.now() - t) / 1000).toFixed(1)} s: ${(size / 1e6).toFixed(0)} MB\n`,
);

// Replicate until the snapshot and the WAL after it are on the replica, then stop Litestream.
const settings = { REPLICA_URL: replica, REPLICA_SYNC_INTERVAL_MS: 1000 };
const config = writeLitestreamConfig(src, dbPath, settings);
t = performance.now();
const ls = spawn(LITESTREAM, ['replicate', '-config', config, '-no-expand-env'], { stdio: ['ignore', 'pipe', 'pipe'] });
await new Promise<void>((resolve) => {
  for (const s of [ls.stdout, ls.stderr])
    createInterface({ input: s }).on('line', (l) => {
      if (l.includes('"wal segment written"')) resolve();
    });
});
ls.kill('SIGTERM');
await new Promise((r) => ls.once('exit', r));
process.stdout.write(`replicated (snapshot + WAL) in ${((performance.now() - t) / 1000).toFixed(1)} s\n`);

const dataDir = join(root, 'restored');
t = performance.now();
const r = spawnSync(process.execPath, [join(import.meta.dirname, '..', 'src', 'main.ts'), 'restore'], {
  env: {
    PATH: process.env.PATH ?? '',
    DATA_DIR: dataDir,
    REPLICA_URL: replica,
    LITESTREAM_BIN: LITESTREAM,
    SERVER_SECRET: 'ef'.repeat(32),
  },
  encoding: 'utf8',
});
const total = (performance.now() - t) / 1000;
process.stdout.write(`${r.stdout.trim()}\n`);
if (r.status !== 0) process.stderr.write(r.stderr.slice(-500));
process.stdout.write(`isocast restore of ${n} signals: ${total.toFixed(1)} s wall, exit ${r.status}\n`);
rmSync(root, { recursive: true, force: true });
