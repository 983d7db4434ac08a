import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openDb, type Db } from '../../src/db/open.ts';
import { createBotMessenger } from '../../src/delivery/messenger.ts';
import { createOutbox } from '../../src/delivery/outbox.ts';
import { createDeliveryWorker } from '../../src/delivery/worker.ts';

type WorkerOptions = NonNullable<Parameters<typeof createDeliveryWorker>[0]['options']>;

const REGISTRATION_GONE = 'registration deleted or moved to another city before sending';
import { systemClock } from '../../src/lib/clock.ts';
import { memoryLogger } from '../helpers/logger.ts';
import { tempDir } from '../helpers/app.ts';
import { startFakeBotApi, type FakeBotApi } from '../fakes/bot-api.ts';
import {
  grant,
  insertSignal,
  outboxRows,
  registerChat,
  signalFixture,
  WALLET_A,
  WALLET_B,
  WALLET_C,
  emptyScreen,
} from './fixtures.ts';
import { createStores } from '../../src/stores.ts';

const FAST = { globalPerSecond: 1000, chatIntervalMs: 1, groupIntervalMs: 1 };
const TERMS = 'https://isocast.example/terms.txt';

type T = { after(fn: () => unknown): void };

function db(t: T): Db {
  const d = openDb(join(tempDir(t), 'isocast.db'));
  t.after(() => d.close());
  return d;
}

async function bot(t: T): Promise<FakeBotApi> {
  const b = await startFakeBotApi();
  t.after(() => b.close());
  return b;
}

function worker(t: T, d: Db, b: FakeBotApi, options: WorkerOptions = {}, timeoutMs = 2_000) {
  const outbox = createOutbox(d, { clock: systemClock, screen: emptyScreen(), reader: createStores(d).reader });
  const messenger = createBotMessenger({ token: b.token, apiUrl: b.url, limits: FAST, timeoutMs });
  const logger = memoryLogger();
  const w = createDeliveryWorker({
    outbox,
    messenger,
    clock: systemClock,
    logger,
    termsUrl: TERMS,
    options: { baseBackoffMs: 10, ...options },
  });
  t.after(() => w.stop());
  return { w, outbox, logger };
}

/** Stores a signal and queues its deliveries in one transaction, as storeSignal's hook does. */
function store(d: Db, outbox: ReturnType<typeof createOutbox>, s = signalFixture()): number {
  return d.transaction(() => {
    insertSignal(d, s);
    return outbox.enqueue(s);
  })();
}

test('rows are queued only for registrations entitled to the signal, once per (wallet, city, day, bucket)', (t) => {
  const d = db(t);
  const outbox = createOutbox(d, { clock: systemClock, screen: emptyScreen(), reader: createStores(d).reader });
  registerChat(d, WALLET_A, '100', 'nyc'); // city registration, entitled
  registerChat(d, WALLET_B, '200', null); // all cities, entitled
  registerChat(d, WALLET_C, '300', 'london'); // other city
  registerChat(d, '0x4444444444444444444444444444444444444444', '400', null); // not entitled to seq 2
  registerChat(d, '0x5555555555555555555555555555555555555555', '500', null); // no entitlement at all
  grant(d, WALLET_A, 'nyc', 2);
  grant(d, WALLET_B, 'nyc', 5);
  grant(d, WALLET_C, 'nyc', 5);
  grant(d, '0x4444444444444444444444444444444444444444', 'nyc', 1);
  const s = signalFixture({ seq: 2 });
  assert.equal(store(d, outbox, s), 2);
  assert.deepEqual(
    outboxRows(d)
      .map((r) => [r.wallet, r.status])
      .sort(),
    [
      [WALLET_A, 'queued'],
      [WALLET_B, 'queued'],
    ],
  );
  assert.equal(outbox.enqueue(s), 0, 'the unique key keeps a second enqueue out');
});

test('queued rows roll back with the signal when the storing transaction fails', (t) => {
  const d = db(t);
  const outbox = createOutbox(d, { clock: systemClock, screen: emptyScreen(), reader: createStores(d).reader });
  registerChat(d, WALLET_A, '100', null);
  grant(d, WALLET_A, 'nyc', 9);
  assert.throws(() =>
    d.transaction(() => {
      insertSignal(d, signalFixture());
      outbox.enqueue(signalFixture());
      throw new Error('later step failed');
    })(),
  );
  assert.equal(outboxRows(d).length, 0);
});

test('the worker pushes queued rows once each and records them sent', async (t) => {
  const d = db(t);
  const b = await bot(t);
  const { w, outbox } = worker(t, d, b);
  registerChat(d, WALLET_A, '100', null);
  registerChat(d, WALLET_B, '-1001234567890', 'nyc');
  grant(d, WALLET_A, 'nyc', 10);
  grant(d, WALLET_B, 'nyc', 10);
  w.start();
  store(d, outbox, signalFixture({ seq: 1 }));
  store(
    d,
    outbox,
    signalFixture({
      seq: 2,
      old: { reading: 84, unit: 'F', bucket: '84-85°F' },
      new: { reading: 86, unit: 'F', bucket: '86-87°F' },
    }),
  );
  w.wake();
  await b.waitForMessages(4);
  await w.whenIdle();
  assert.equal(b.messages.length, 4);
  assert.deepEqual(b.messages.map((m) => m.chatId).sort(), ['-1001234567890', '-1001234567890', '100', '100']);
  assert.ok(b.messages.every((m) => m.text.includes('New York City, market day 2026-07-15')));
  assert.deepEqual(
    outboxRows(d).map((r) => [r.status, r.attempts]),
    [
      ['sent', 1],
      ['sent', 1],
      ['sent', 1],
      ['sent', 1],
    ],
  );
});

test('failures known to precede delivery are retried with backoff; the message then arrives once', async (t) => {
  const d = db(t);
  const b = await bot(t);
  const { w, outbox } = worker(t, d, b);
  registerChat(d, WALLET_A, '100', null);
  grant(d, WALLET_A, 'nyc', 10);
  b.behave('100', { kind: 'server_error', times: 2 });
  w.start();
  store(d, outbox);
  w.wake();
  await b.waitForMessages(1);
  await w.whenIdle();
  assert.equal(b.requests.length, 3);
  assert.equal(b.messages.length, 1);
  assert.deepEqual(
    outboxRows(d).map((r) => [r.status, r.attempts]),
    [['sent', 3]],
  );
});

test('a 429 is retried no earlier than retry_after', async (t) => {
  const d = db(t);
  const b = await bot(t);
  const { w, outbox } = worker(t, d, b);
  registerChat(d, WALLET_A, '100', null);
  grant(d, WALLET_A, 'nyc', 10);
  b.behave('100', { kind: 'rate_limited', retryAfterSec: 1, times: 1 });
  w.start();
  store(d, outbox);
  w.wake();
  await b.waitForMessages(1);
  assert.equal(b.requests.length, 2);
  assert.ok(b.requests[1]!.atMs - b.requests[0]!.atMs >= 990, 'retry_after honoured');
});

test('refusals, ambiguous sends and exhausted retries are failed and never sent again', async (t) => {
  const d = db(t);
  const b = await bot(t);
  const { w, outbox } = worker(t, d, b, { maxAttempts: 3 }, 300);
  for (const [wallet, chat] of [
    [WALLET_A, '100'],
    [WALLET_B, '200'],
    [WALLET_C, '300'],
  ] as const) {
    registerChat(d, wallet, chat, null);
    grant(d, wallet, 'nyc', 10);
  }
  b.behave('100', { kind: 'not_found' });
  b.behave('200', { kind: 'hang' }); // accepted by the platform, answer lost: must not be resent
  b.behave('300', { kind: 'server_error' });
  w.start();
  store(d, outbox);
  w.wake();
  await w.whenIdle();
  const rows = outboxRows(d);
  assert.deepEqual(
    rows.map((r) => [r.chat_id, r.status, r.attempts]),
    [
      ['100', 'failed', 1],
      ['200', 'failed', 1],
      ['300', 'failed', 3],
    ],
  );
  assert.match(rows[0]!.last_error!, /rejected: Bad Request: chat not found/);
  assert.match(rows[1]!.last_error!, /ambiguous: timed out/);
  assert.match(rows[2]!.last_error!, /server_error/);
  const perChat = (chat: string) => b.requests.filter((r) => r.chatId === chat).length;
  assert.deepEqual([perChat('100'), perChat('200'), perChat('300')], [1, 1, 3]);
});

test('a registration deleted or moved to another city before the send is not pushed', async (t) => {
  const d = db(t);
  const b = await bot(t);
  const { w, outbox } = worker(t, d, b);
  registerChat(d, WALLET_A, '100', null);
  registerChat(d, WALLET_B, '200', null);
  grant(d, WALLET_A, 'nyc', 10);
  grant(d, WALLET_B, 'nyc', 10);
  store(d, outbox);
  d.prepare('DELETE FROM delivery_registrations WHERE wallet = ?').run(WALLET_A);
  registerChat(d, WALLET_B, '200', 'london');
  w.start();
  await w.whenIdle();
  assert.equal(b.requests.length, 0);
  assert.deepEqual(
    outboxRows(d).map((r) => [r.status, r.last_error]),
    [
      ['failed', REGISTRATION_GONE],
      ['failed', REGISTRATION_GONE],
    ],
  );
});

test('a changed chat receives the rows queued before the change', async (t) => {
  const d = db(t);
  const b = await bot(t);
  const { w, outbox } = worker(t, d, b);
  registerChat(d, WALLET_A, '100', null);
  grant(d, WALLET_A, 'nyc', 10);
  store(d, outbox);
  registerChat(d, WALLET_A, '101', 'nyc');
  w.start();
  await b.waitForMessages(1);
  assert.equal(b.messages[0]!.chatId, '101');
});

test('without a bot token the worker idles and leaves rows queued', async (t) => {
  const d = db(t);
  const outbox = createOutbox(d, { clock: systemClock, screen: emptyScreen(), reader: createStores(d).reader });
  const logger = memoryLogger();
  const w = createDeliveryWorker({
    outbox,
    messenger: createBotMessenger({ apiUrl: 'http://127.0.0.1:9' }),
    clock: systemClock,
    logger,
    termsUrl: TERMS,
  });
  t.after(() => w.stop());
  registerChat(d, WALLET_A, '100', null);
  grant(d, WALLET_A, 'nyc', 10);
  store(d, outbox);
  w.start();
  await w.whenIdle();
  assert.deepEqual(
    outboxRows(d).map((r) => r.status),
    ['queued'],
  );
  assert.ok(logger.lines.some((l) => l.includes('not configured')));
});

test('one chat has one send in flight; other chats are not held up behind it', async (t) => {
  const d = db(t);
  const b = await bot(t);
  const { w, outbox } = worker(t, d, b, {}, 300);
  registerChat(d, WALLET_A, '100', null);
  registerChat(d, WALLET_B, '200', null);
  grant(d, WALLET_A, 'nyc', 10);
  grant(d, WALLET_B, 'nyc', 10);
  b.behave('100', { kind: 'hang' });
  w.start();
  store(d, outbox, signalFixture({ seq: 1 }));
  w.wake();
  // While chat 100's send hangs, chat 200 gets its message.
  const got = await b.waitForMessages(2);
  assert.deepEqual(got.map((m) => m.chatId).sort(), ['100', '200']);
  await w.whenIdle();
  assert.deepEqual(
    outboxRows(d).map((r) => [r.chat_id, r.status]),
    [
      ['100', 'failed'],
      ['200', 'sent'],
    ],
  );
});
