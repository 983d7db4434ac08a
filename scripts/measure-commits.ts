/**
 * The ledger's two commits per purchase (the claim, then record + apply + receipt) on a real
 * SQLite file in the data directory's file system, with WAL checkpoints run (a) by SQLite inside
 * the commit that passes 1,000 pages, on the calling thread (the default), and (b) by the
 * background checkpoint thread (src/db/checkpointer.ts), as `serve` runs. Rounds alternate so
 * outside load lands on both alike. Prints µs per purchase: mean, p50, p99, worst, and the share
 * of the time spent in commits slower than 1 ms.
 *
 * node scripts/measure-commits.ts [--rounds 8] [--per-round 1500] [--dir bench/tmp]
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startCheckpointer, type Checkpointer } from '../src/db/checkpointer.ts';
import { createGroupCommit } from '../src/db/group-commit.ts';
import { openDb } from '../src/db/open.ts';
import { memoryLogger } from '../src/lib/logger.ts';
import { createLedger } from '../src/payments/ledger.ts';
import { createPaymentStore } from '../src/payments/store.ts';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '8' },
    'per-round': { type: 'string', default: '1500' },
    dir: { type: 'string', default: join(import.meta.dirname, '..', 'bench', 'tmp', 'commits') },
  },
});
const ROUNDS = Number(values.rounds);
const PER_ROUND = Number(values['per-round']);
const logger = memoryLogger('error');
const hex = (n: number) => `0x${randomBytes(n).toString('hex')}`;

type Variant = { purchase(): Promise<void>; close(): Promise<void> };
async function variant(name: string, thread: boolean): Promise<Variant> {
  const dir = join(values.dir, name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const path = join(dir, 'isocast.db');
  const db = openDb(path);
  const store = createPaymentStore(db);
  const clock = { now: () => Date.now() };
  // One purchase at a time: every group commit carries one unit, as at low load.
  const commits = createGroupCommit(db);
  const ledger = createLedger({ db, store, clock, logger, pending: () => new Error('pending') as never, commits });
  let ckpt: Checkpointer | null = null;
  if (thread) {
    ckpt = startCheckpointer({ db, path, logger });
    while (!ckpt.running()) await new Promise((r) => setTimeout(r, 10));
  }
  return {
    async purchase() {
      const claim = await commits.run(() =>
        store.claim({
          payer: hex(20),
          nonce: hex(32),
          city: 'nyc',
          count: 20,
          amountMicro: 100_000,
          settler: 'mock',
          nowMs: clock.now(),
          validBefore: 2_000_000_000,
        }),
      );
      if (!claim.claimed) throw new Error('claim refused');
      await ledger.recordAndApply(claim.id, hex(32) as `0x${string}`, true);
    },
    async close() {
      await ckpt?.stop();
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const variants = {
  'main thread (SQLite default)': await variant('main', false),
  'checkpoint thread': await variant('thread', true),
};
const samples: Record<string, number[]> = {};
for (const v of Object.values(variants)) for (let i = 0; i < 2000; i++) await v.purchase();
for (let r = 0; r < ROUNDS; r++)
  for (const [name, v] of Object.entries(variants)) {
    // The event loop turns between bursts, as between requests: the thread's messages land.
    await new Promise((res) => setImmediate(res));
    samples[name] ??= [];
    const s = samples[name];
    for (let i = 0; i < PER_ROUND; i++) {
      const t = performance.now();
      await v.purchase();
      s.push((performance.now() - t) * 1000);
    }
  }
for (const v of Object.values(variants)) await v.close();
const out: Record<string, object> = {};
for (const [name, s] of Object.entries(samples)) {
  const sorted = [...s].sort((a, b) => a - b);
  const total = s.reduce((a, b) => a + b, 0);
  const at = (p: number) => Math.round(sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!);
  out[name] = {
    purchases: s.length,
    meanUs: Math.round(total / s.length),
    p50Us: at(0.5),
    p99Us: at(0.99),
    worstUs: Math.round(sorted[sorted.length - 1]!),
    shareOver1ms: Number((s.filter((x) => x > 1000).reduce((a, b) => a + b, 0) / total).toFixed(2)),
  };
}
process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
