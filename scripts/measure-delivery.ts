/**
 * Numbers for the delivery closing note, measured against the local fake Bot API
 * (test/fakes/bot-api.ts) over 127.0.0.1 with the production pacing limits unless stated:
 *
 *   1. latency   time from a signal's commit (signal + outbox rows in one transaction, then wake())
 *                to the fake bot receiving the message: p50 / p99 / max, with one subscriber per
 *                city so pacing never holds a message back.
 *   2. fan-out   one burst of messages across many chats, ten wallets sharing each chat, with
 *                the production limits: sustained sends per second, and the largest number of
 *                messages any one chat (and all chats) received in any sliding 1 s window.
 *   3. capacity  the same burst with pacing lifted, to show the worker's own ceiling.
 *
 * Usage: node scripts/measure-delivery.ts [--json] [--signals N] [--burst N] [--per-chat N]
 * The fake runs in this process, so both ends share one event loop; numbers are for a quiet
 * machine and include the JSON encode, HTTP round trip and SQLite writes of each send.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDb, type Db } from '../src/db/open.ts';
import { createCatalog } from '../src/cities/catalog.ts';
import { createBotMessenger } from '../src/delivery/messenger.ts';
import { createOutbox, type Outbox } from '../src/delivery/outbox.ts';
import { BOT_API_LIMITS, type SendLimits } from '../src/delivery/pacer.ts';
import { createDeliveryWorker } from '../src/delivery/worker.ts';
import { systemClock } from '../src/lib/clock.ts';
import { createLogger } from '../src/lib/logger.ts';
import type { SignalPublic } from '../src/signals/schemas.ts';
import { startFakeBotApi, type BotMessage } from '../test/fakes/bot-api.ts';
import { sanctionsScreen } from '../src/delivery/screen.ts';
import { loadSanctionsList } from '../src/sanctions/list.ts';
import { createStores } from '../src/stores.ts';

const args = process.argv.slice(2);
const flag = (name: string, dflt: number) => {
  const i = args.indexOf(name);
  return i === -1 ? dflt : Number(args[i + 1]);
};
const SIGNALS = flag('--signals', 200);
const BURST = flag('--burst', 600);
const PER_CHAT = flag('--per-chat', 10);
// Above the 40 ms global pacing gap, so a message never waits behind the previous one.
const SPACING_MS = 100;

const cities = createCatalog().active;
const logger = createLogger({ level: 'error', write: (l) => process.stderr.write(l + '\n') });

function signal(city: string, seq: number): SignalPublic {
  const lo = 40 + 2 * seq;
  return {
    city,
    displayName: city,
    seq,
    targetDate: '2026-07-15',
    marketUrl: `https://polymarket.com/event/highest-temperature-in-${city}-on-july-15-2026`,
    conditionId: '0x' + 'ab'.repeat(32),
    old: { reading: lo - 1, unit: 'F', bucket: `${lo - 2}-${lo - 1}°F` },
    new: { reading: lo, unit: 'F', bucket: `${lo}-${lo + 1}°F` },
    buckets: Array.from({ length: 11 }, (_, i) => ({
      label: `${lo - 10 + 2 * i}-${lo - 9 + 2 * i}°F`,
      conditionId: '0x01',
      yes: 0.09,
      no: 0.91,
      midpoint: 0.09,
      ...(i < 5 ? { dead: true as const } : {}),
    })),
    bucketsAsOf: '2026-07-15T15:00:02.000Z',
    source: 'wu',
    observedAt: '2026-07-15T15:00:00.000Z',
    reportedAt: '2026-07-15T14:51:00.000Z',
    channel: 'wu',
    rawReport: null,
    reportedValue: lo,
    reportedUnit: 'F',
    reportedPrecision: 1,
    availableAt: null,
    storedAt: '2026-07-15T15:00:02.500Z',
  };
}

/** Registers chats and entitles their wallets (also used by scripts/bench/poller.ts). */
export function seed(db: Db, regs: { wallet: string; chat: string; city: string | null }[], entitled: string[]): void {
  const reg = db.prepare(
    'INSERT INTO delivery_registrations (wallet, chat_id, city, created_at, updated_at) VALUES (?, ?, ?, 0, 0)',
  );
  const ent = db.prepare(
    'INSERT OR REPLACE INTO entitlements (wallet, city, paid_through_seq, total_paid_signals, updated_at) VALUES (?, ?, 1000000, 1000000, 0)',
  );
  db.transaction(() => {
    for (const r of regs) {
      reg.run(r.wallet, r.chat, r.city);
      for (const city of r.city ? [r.city] : entitled) ent.run(r.wallet, city);
    }
  })();
}

const insertSignal = (db: Db) =>
  db.prepare(
    'INSERT INTO signals (city, seq, target_date, new_bucket, observed_at, payload, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );

/** Stores a signal and queues its rows in one transaction, as storeSignal's hook does. */
function store(db: Db, outbox: Outbox, s: SignalPublic): void {
  db.transaction(() => {
    insertSignal(db).run(s.city, s.seq, s.targetDate, s.new.bucket, s.observedAt, JSON.stringify(s), Date.now());
    outbox.enqueue(s);
  })();
}

async function harness(limits: SendLimits) {
  const dir = mkdtempSync(join(tmpdir(), 'isocast-measure-'));
  const db = openDb(join(dir, 'isocast.db'));
  const bot = await startFakeBotApi();
  const messenger = createBotMessenger({ token: bot.token, apiUrl: bot.url, limits });
  const outbox = createOutbox(db, {
    clock: systemClock,
    screen: sanctionsScreen(loadSanctionsList({}), { required: false }),
    reader: createStores(db).reader,
  });
  const worker = createDeliveryWorker({
    outbox,
    messenger,
    clock: systemClock,
    logger,
    termsUrl: 'https://isocast.example/terms.txt',
  });
  worker.start();
  return {
    db,
    bot,
    outbox,
    worker,
    close: async () => {
      await worker.stop();
      await bot.close();
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const wallet = (i: number) => '0x' + i.toString(16).padStart(40, '0');
const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
const round = (n: number, d = 1) => Number(n.toFixed(d));

async function latency() {
  const h = await harness(BOT_API_LIMITS);
  // One wallet per city, each with its own chat: a chat gets a message every cities*spacing ms,
  // well above its 1.1 s pacing, so the numbers are the pipeline and not the pacing.
  seed(
    h.db,
    cities.map((c, i) => ({ wallet: wallet(i + 1), chat: String(100_000 + i), city: c.slug })),
    [],
  );
  const storedAt = new Map<string, number>();
  for (let n = 0; n < SIGNALS; n++) {
    const city = cities[n % cities.length]!;
    const seq = Math.floor(n / cities.length) + 1;
    store(h.db, h.outbox, signal(city.slug, seq));
    storedAt.set(`${city.slug}#${seq}`, Date.now());
    h.worker.wake();
    await new Promise((r) => setTimeout(r, SPACING_MS));
  }
  const msgs = await h.bot.waitForMessages(SIGNALS, 60_000);
  const lat = msgs
    .map((m) => {
      const seq = /signal #(\d+): (\S+),/.exec(m.text)!;
      return m.atMs - storedAt.get(`${seq[2]}#${seq[1]}`)!;
    })
    .sort((a, b) => a - b);
  await h.close();
  return {
    messages: lat.length,
    spacingMs: SPACING_MS,
    p50Ms: pct(lat, 50),
    p99Ms: pct(lat, 99),
    maxMs: lat[lat.length - 1]!,
  };
}

function maxInWindow(times: number[], windowMs: number): number {
  const t = [...times].sort((a, b) => a - b);
  let best = 0;
  for (let i = 0, j = 0; i < t.length; i++) {
    while (t[i]! - t[j]! >= windowMs) j++;
    best = Math.max(best, i - j + 1);
  }
  return best;
}

async function burst(limits: SendLimits) {
  const h = await harness(limits);
  // BURST wallets, PER_CHAT of them sharing each chat (so every chat has a queue and the per-chat
  // limit binds as much as the global one), all registered for every city; one signal fans out.
  const chats = Math.max(1, Math.floor(BURST / PER_CHAT));
  seed(
    h.db,
    Array.from({ length: BURST }, (_, i) => ({
      wallet: wallet(10_000 + i),
      chat: String(200_000 + (i % chats)),
      city: null,
    })),
    ['nyc'],
  );
  const started = Date.now();
  store(h.db, h.outbox, signal('nyc', 1));
  h.worker.wake();
  const msgs: BotMessage[] = await h.bot.waitForMessages(BURST, 600_000);
  await h.worker.whenIdle();
  const first = Math.min(...msgs.map((m) => m.atMs));
  const last = Math.max(...msgs.map((m) => m.atMs));
  const byChat = new Map<string, number[]>();
  for (const m of msgs) byChat.set(m.chatId, [...(byChat.get(m.chatId) ?? []), m.atMs]);
  let perChatMax1s = 0;
  let minChatGapMs = Infinity;
  for (const times of byChat.values()) {
    perChatMax1s = Math.max(perChatMax1s, maxInWindow(times, 1000));
    const s = [...times].sort((a, b) => a - b);
    for (let i = 1; i < s.length; i++) minChatGapMs = Math.min(minChatGapMs, s[i]! - s[i - 1]!);
  }
  const counts = h.outbox.counts();
  await h.close();
  return {
    messages: msgs.length,
    chats,
    totalMs: last - started,
    sendsPerSecond: round((msgs.length - 1) / ((last - first) / 1000)),
    globalMaxIn1s: maxInWindow(
      msgs.map((m) => m.atMs),
      1000,
    ),
    perChatMaxIn1s: perChatMax1s,
    minGapSameChatMs: minChatGapMs,
    duplicates: msgs.length - new Set(msgs.map((m) => `${m.chatId}|${m.text}|${m.atMs}`)).size,
    outbox: counts,
  };
}

// Importable for its helpers; measures only when run directly.
if (import.meta.main) {
  const results = {
    node: process.version,
    limits: BOT_API_LIMITS,
    latency: await latency(),
    fanOut: await burst(BOT_API_LIMITS),
    capacityUnpaced: await burst({ globalPerSecond: 1_000_000, chatIntervalMs: 0, groupIntervalMs: 0 }),
  };

  if (args.includes('--json')) {
    process.stdout.write(JSON.stringify(results, null, 2) + '\n');
  } else {
    const { latency: l, fanOut: f, capacityUnpaced: c } = results;
    process.stdout.write(
      [
        `delivery measurements (${results.node}, fake Bot API on 127.0.0.1)`,
        `stored -> received: p50 ${l.p50Ms} ms, p99 ${l.p99Ms} ms, max ${l.maxMs} ms over ${l.messages} signals (one every ${l.spacingMs} ms)`,
        `fan-out with production pacing: ${f.messages} messages to ${f.chats} chats in ${f.totalMs} ms = ${f.sendsPerSecond} sends/s; ` +
          `max ${f.globalMaxIn1s} in any 1 s overall (limit 30), max ${f.perChatMaxIn1s} per chat in any 1 s (limit 1), min same-chat gap ${f.minGapSameChatMs} ms`,
        `worker capacity with pacing lifted: ${c.sendsPerSecond} sends/s (${c.messages} messages in ${c.totalMs} ms)`,
      ].join('\n') + '\n',
    );
  }
}
