/**
 * The ledger's two commits per purchase (the claim, then record + apply + receipt) on a real
 * SQLite file in the data directory's file system, with WAL checkpoints run (a) by SQLite inside
 * the commit that passes 1,000 pages, on the calling thread (the default), and (b) by the
 * background checkpoint thread (src/db/checkpointer.ts), as `serve` runs, one purchase at a time
 * (each group commit carries one unit, as at low load); and (c) as (b) with 8 purchases at once,
 * their claims in one group commit and their applications in another (src/db/group-commit.ts), as
 * under load. Rounds alternate so outside load lands on all alike. Prints µs per purchase: mean,
 * p50, p99, worst (for (c) over the groups' per-purchase times), and the share of the time spent
 * in purchases slower than 1 ms.
 *
 * node scripts/measure-commits.ts [--rounds 8] [--per-round 1500] [--dir bench/tmp]
 */
import { createSecretKey, randomBytes } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startCheckpointer } from '../src/db/checkpointer.ts';
import { createGroupCommit } from '../src/db/group-commit.ts';
import { openDb } from '../src/db/open.ts';
import { createLogger } from '../src/lib/logger.ts';
import { createLedger } from '../src/payments/ledger.ts';
import { createPaymentStore } from '../src/payments/store.ts';
import { createStores } from '../src/stores.ts';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '8' },
    'per-round': { type: 'string', default: '1500' },
    dir: { type: 'string', default: join(import.meta.dirname, '..', 'bench', 'tmp', 'commits') },
  },
});
const ROUNDS = Number(values.rounds);
const PER_ROUND = Number(values['per-round']);
const logger = createLogger({ level: 'error', write: () => {} });
const hex = (n: number) => `0x${randomBytes(n).toString('hex')}`;

/** `group` purchases at once: their claims share one group commit, then their applications another. */
type Variant = { group: number; purchase(): Promise<void>; close(): Promise<void> };
async function variant(name: string, thread: boolean, group = 1): Promise<Variant> {
  const dir = join(values.dir, name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const path = join(dir, 'isocast.db');
  const db = openDb(path);
  const store = createPaymentStore(db);
  const clock = { now: () => Date.now() };
  const commits = createGroupCommit(db);
  const ledger = createLedger({
    db,
    stores: createStores(db),
    store,
    clock,
    logger,
    retryAfterSeconds: 10,
    commits,
    secret: () => createSecretKey(randomBytes(32)),
  });
  let ckpt: ReturnType<typeof startCheckpointer> | null = null;
  if (thread) {
    ckpt = startCheckpointer({ db, path, logger });
    while (!ckpt.running()) await new Promise((r) => setTimeout(r, 10));
  }
  const one = async () => {
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
        bindingK: null,
      }),
    );
    if (!claim.claimed) throw new Error('claim refused');
    await ledger.recordAndApply(claim.id, hex(32) as `0x${string}`, { withReceipt: true });
  };
  return {
    group,
    purchase: async () => {
      await Promise.all(Array.from({ length: group }, one));
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
  // As under load, when one turn of the event loop finishes several purchases' steps.
  'checkpoint thread, groups of 8': await variant('group8', true, 8),
};
const samples: Record<string, number[]> = {};
for (const v of Object.values(variants)) for (let i = 0; i < 2000; i += v.group) await v.purchase();
for (let r = 0; r < ROUNDS; r++)
  for (const [name, v] of Object.entries(variants)) {
    // The event loop turns between bursts, as between requests: the thread's messages land.
    await new Promise((res) => setImmediate(res));
    samples[name] ??= [];
    const s = samples[name];
    // A group's time is shared by its purchases: one sample per group, per purchase.
    for (let i = 0; i < PER_ROUND; i += v.group) {
      const t = performance.now();
      await v.purchase();
      s.push(((performance.now() - t) * 1000) / v.group);
    }
  }
for (const v of Object.values(variants)) await v.close();
const out: Record<string, object> = {};
for (const [name, s] of Object.entries(samples)) {
  const sorted = [...s].sort((a, b) => a - b);
  const total = s.reduce((a, b) => a + b, 0);
  const at = (p: number) => Math.round(sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!);
  out[name] = {
    purchases: s.length * variants[name as keyof typeof variants].group,
    meanUs: Math.round(total / s.length),
    p50Us: at(0.5),
    p99Us: at(0.99),
    worstUs: Math.round(sorted[sorted.length - 1]!),
    shareOver1ms: Number((s.filter((x) => x > 1000).reduce((a, b) => a + b, 0) / total).toFixed(2)),
  };
}
process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
