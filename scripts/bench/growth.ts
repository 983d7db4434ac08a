/**
 * `npm run bench -- --only growth`: a year-old database on a busy install, and what the operator
 * and the poller pay for it. Builds (straight SQL, one transaction per table: the real write path
 * would take hours for this much) a data directory with 1 million signals spread over the active
 * cities, 2 million delivery outbox rows (sent and failed, updated within the last week, so
 * retention keeps them all), 200,000 entitlements (with one applied payment
 * and its receipt each, plus failed attempts over the past year, most of which the start-up
 * prune removes) and 20,000 chat registrations. Then:
 *
 *   - starts a real `src/main.ts serve` on it (so its start-up maintenance runs) and times
 *     sequential GET /metrics and GET /admin/data.json with the admin bearer;
 *   - stops it, opens the database as the poller does and times one signal enqueue
 *     (`createOutbox().enqueue`, the storeSignal hook) for a new signal per city, rolled back.
 *
 * Sizes are an argument so a test can run the same code small; the bench uses FULL_SIZES.
 */
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createCatalog } from '../../src/cities/catalog.ts';
import { openDb } from '../../src/db/open.ts';
import { createOutbox } from '../../src/delivery/outbox.ts';
import type { SignalPublic } from '../../src/signals/schemas.ts';
import { freePort, median, mockServeEnv, NODE, percentile, ROOT, round, spawnServer } from './util.ts';
import { sanctionsScreen } from '../../src/delivery/screen.ts';
import { loadSanctionsList } from '../../src/sanctions/list.ts';
import { createStores } from '../../src/stores.ts';

export type GrowthSizes = { signals: number; outbox: number; entitlements: number; registrations: number };
export const FULL_SIZES: GrowthSizes = {
  signals: 1_000_000,
  outbox: 2_000_000,
  entitlements: 200_000,
  registrations: 20_000,
};
const ADMIN_TOKEN = 'growth-bench-admin-token-0123456789abcdef-0123456789';
const DAY_MS = 86_400_000;
const wallet = (i: number) => '0x' + i.toString(16).padStart(40, '0');
const PAYLOAD = JSON.stringify({ note: 'synthetic growth-bench signal', pad: 'x'.repeat(300) });

/** Fills `dbPath` (created by the code under test, so its schema and triggers apply). */
export function buildGrowthDb(
  dbPath: string,
  sizes: GrowthSizes,
  nowMs: number,
  log: (s: string) => void,
): { latest: Map<string, number> } {
  const cities = createCatalog().active.map((c) => c.slug);
  const db = openDb(dbPath);
  try {
    db.pragma('synchronous = OFF');
    const latest = new Map<string, number>();
    const perCity = Math.ceil(sizes.signals / cities.length);
    const sig = db.prepare(
      `INSERT INTO signals (city, seq, target_date, new_bucket, observed_at, payload, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
    );
    let t = Date.now();
    db.transaction(() => {
      let n = 0;
      for (const city of cities) {
        for (let seq = 1; seq <= perCity && n < sizes.signals; seq++, n++) {
          const date = new Date(Date.UTC(2020, 0, 1) + Math.floor((seq - 1) / 8) * DAY_MS).toISOString().slice(0, 10);
          sig.run(city, seq, date, `b${(seq - 1) % 8}`, `${date}T12:00:00Z`, PAYLOAD, nowMs - 30 * DAY_MS);
          latest.set(city, seq);
        }
      }
    })();
    log(`growth: ${sizes.signals} signals in ${Date.now() - t} ms`);

    // Wallet i holds entitlements for 4 consecutive cities; one in twenty is still paid past the
    // latest signal, so an enqueue has real rows to queue.
    t = Date.now();
    const ent = db.prepare(
      `INSERT INTO entitlements (wallet, city, paid_through_seq, total_paid_signals, updated_at) VALUES (?, ?, ?, ?, ?)`,
    );
    const pay =
      db.prepare(`INSERT INTO payments (payer, nonce, city, count, amount_micro, settler, status, error, created_at, updated_at)
      VALUES (?, ?, ?, 10, 50000, 'mock', ?, ?, ?, ?)`);
    const receipt = db.prepare(
      `INSERT INTO receipts (selector, verifier_hash, wallet, payment_id, created_at) VALUES (?, x'00', ?, ?, ?)`,
    );
    db.transaction(() => {
      for (let i = 0; i < sizes.entitlements; i++) {
        const w = wallet(Math.floor(i / 4));
        const city = cities[(Math.floor(i / 4) + (i % 4)) % cities.length]!;
        const top = latest.get(city) ?? 0;
        const through = i % 20 === 0 ? top + 50 : Math.max(1, top - 1 - (i % 1000));
        // Older rows have lower ids, as on a real install: a year, oldest first.
        const at = nowMs - Math.floor(((sizes.entitlements - 1 - i) * 365) / sizes.entitlements) * DAY_MS;
        ent.run(w, city, through, 10, at);
        const paid = pay.run(w, '0x' + i.toString(16).padStart(64, '0'), city, 'applied', null, at, at);
        receipt.run(`r${i}`, w, paid.lastInsertRowid, at);
        if (i % 2 === 0)
          pay.run(
            w,
            '0x' + (i + 0x1000000000).toString(16).padStart(64, '0'),
            city,
            'failed',
            'signature invalid',
            at,
            at,
          );
      }
    })();
    log(
      `growth: ${sizes.entitlements} entitlements, ${Math.ceil(sizes.entitlements * 1.5)} payments and ${sizes.entitlements} receipts in ${Date.now() - t} ms`,
    );

    t = Date.now();
    const reg = db.prepare(
      `INSERT INTO delivery_registrations (wallet, chat_id, city, created_at, updated_at) VALUES (?, ?, NULL, ?, ?)`,
    );
    db.transaction(() => {
      for (let i = 0; i < sizes.registrations; i++) reg.run(wallet(i), String(1_000_000 + i), nowMs, nowMs);
    })();
    const out =
      db.prepare(`INSERT INTO delivery_outbox (wallet, city, target_date, bucket, seq, status, attempts, next_attempt_at, chat_id, last_error, created_at, updated_at)
      VALUES (?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?)`);
    db.transaction(() => {
      for (let i = 0; i < sizes.outbox; i++) {
        const w = i % sizes.registrations;
        const k = Math.floor(i / sizes.registrations);
        const city = cities[k % cities.length]!;
        const seq = 1 + Math.floor(k / cities.length);
        const date = new Date(Date.UTC(2020, 0, 1) + Math.floor((seq - 1) / 8) * DAY_MS).toISOString().slice(0, 10);
        const failed = i % 50 === 0;
        const at = nowMs - (i % 7) * DAY_MS - 60_000;
        out.run(
          wallet(w),
          city,
          date,
          `b${(seq - 1) % 8}`,
          seq,
          failed ? 'failed' : 'sent',
          at,
          String(1_000_000 + w),
          failed ? 'chat not found' : null,
          at,
          at,
        );
      }
    })();
    log(`growth: ${sizes.registrations} registrations and ${sizes.outbox} outbox rows in ${Date.now() - t} ms`);
    return { latest };
  } finally {
    db.close();
  }
}

async function timeGets(
  url: string,
  n: number,
): Promise<{ p50Ms: number; p95Ms: number; maxMs: number; bytes: number }> {
  const headers = { authorization: `Bearer ${ADMIN_TOKEN}` };
  let bytes = 0;
  for (let i = 0; i < 3; i++) await (await fetch(url, { headers })).arrayBuffer(); // warm-up
  const ms: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const res = await fetch(url, { headers });
    const body = await res.arrayBuffer();
    ms.push(performance.now() - t0);
    if (res.status !== 200) throw new Error(`${url} answered ${res.status}`);
    bytes = body.byteLength;
  }
  return { p50Ms: round(median(ms), 2), p95Ms: round(percentile(ms, 95), 2), maxMs: round(Math.max(...ms), 2), bytes };
}

async function startupMaintenance(logFile: string): Promise<unknown> {
  const t0 = Date.now();
  for (;;) {
    const lines = readFileSync(logFile, 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const prune = lines.find((l) => l.msg === 'retention prune done');
    const optimized = lines.find((l) => l.msg === 'database optimized');
    if (optimized) return { prune, optimizeMs: optimized.ms };
    if (!lines.some((l) => l.msg === 'retention prune started') && Date.now() - t0 > 3_000) return null;
    if (Date.now() - t0 > 600_000) throw new Error('start-up maintenance did not finish within 10 minutes');
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** One enqueue per city for its next signal, each inside a transaction that is rolled back. */
function timeEnqueue(
  dbPath: string,
  latest: Map<string, number>,
): { p50Ms: number; p95Ms: number; maxMs: number; rowsQueuedMedian: number } {
  const db = openDb(dbPath);
  const rollback = new Error('rollback');
  try {
    const outbox = createOutbox(db, {
      clock: { now: () => Date.now() },
      screen: sanctionsScreen(loadSanctionsList({}), { required: false }),
      reader: createStores(db).reader,
    });
    const ms: number[] = [];
    const rows: number[] = [];
    for (let round = 0; round < 3; round++) {
      for (const [city, seq] of latest) {
        const signal = {
          city,
          seq: seq + 1,
          targetDate: '2099-01-01',
          new: { bucket: 'growth' },
        } as unknown as SignalPublic;
        try {
          db.transaction(() => {
            const t0 = performance.now();
            rows.push(outbox.enqueue(signal));
            ms.push(performance.now() - t0);
            throw rollback;
          })();
        } catch (err) {
          if (err !== rollback) throw err;
        }
      }
    }
    return {
      p50Ms: round(median(ms), 3),
      p95Ms: round(percentile(ms, 95), 3),
      maxMs: round(Math.max(...ms), 3),
      rowsQueuedMedian: median(rows),
    };
  } finally {
    db.close();
  }
}

export async function runGrowth(opts: {
  dir: string;
  sizes?: GrowthSizes;
  log?: (s: string) => void;
  samples?: number;
}) {
  const sizes = opts.sizes ?? FULL_SIZES;
  const log = opts.log ?? (() => {});
  rmSync(opts.dir, { recursive: true, force: true });
  const dataDir = join(opts.dir, 'data');
  mkdirSync(dataDir, { recursive: true });
  const dbPath = join(dataDir, 'isocast.db');
  const nowMs = Date.now();
  const t0 = Date.now();
  const { latest } = buildGrowthDb(dbPath, sizes, nowMs, log);
  const buildS = round((Date.now() - t0) / 1000);
  const port = await freePort();
  const startT = Date.now();
  const server = await spawnServer(NODE, [join(ROOT, 'src', 'main.ts'), 'serve'], {
    env: mockServeEnv(port, dataDir, opts.dir, { ADMIN_TOKEN }),
    port,
    logFile: join(opts.dir, 'server.log'),
    readyPath: '/health',
  });
  const startS = round((Date.now() - startT) / 1000, 2);
  // The steady state is measured: first let the start-up maintenance (retention prune, PRAGMA
  // optimize) finish, and report what it cost. A build without it logs neither line.
  const startup = await startupMaintenance(join(opts.dir, 'server.log'));
  let metrics: Awaited<ReturnType<typeof timeGets>>;
  let admin: Awaited<ReturnType<typeof timeGets>>;
  try {
    const n = opts.samples ?? 30;
    metrics = await timeGets(`${server.url}/metrics`, n);
    admin = await timeGets(`${server.url}/admin/data.json`, n);
  } finally {
    await server.stop();
  }
  const enqueue = timeEnqueue(dbPath, latest);
  return {
    sizes,
    buildS,
    serverStartS: startS,
    startup,
    metrics,
    adminData: admin,
    enqueue,
    targets: { metricsMs: 50, adminDataMs: 50, enqueueMs: 5 },
  };
}
