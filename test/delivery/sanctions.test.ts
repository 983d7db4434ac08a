import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createBotMessenger, MessengerError } from '../../src/delivery/messenger.ts';
import { createOutbox } from '../../src/delivery/outbox.ts';
import { SANCTIONED_NOT_PUSHED, sanctionsScreen } from '../../src/delivery/screen.ts';
import { deliveryTypedData } from '../../src/delivery/typed-data.ts';
import { createDeliveryWorker } from '../../src/delivery/worker.ts';
import { systemClock } from '../../src/lib/clock.ts';
import { manualClock } from '../helpers/clock.ts';
import { memoryLogger } from '../helpers/logger.ts';
import { loadSanctionsList, watchSanctionsList } from '../../src/sanctions/list.ts';
import { tempDir, testApp } from '../helpers/app.ts';
import { startFakeBotApi } from '../fakes/bot-api.ts';
import { inApp } from '../payments/buy.ts';
import { grant, insertSignal, outboxRows, registerChat, registerOverHttp, signalFixture } from './fixtures.ts';
import { createStores } from '../../src/stores.ts';

/**
 * Issue 23 item 3: a wallet put on the sanctions list while the service runs (the file rewritten,
 * then SIGHUP's reload, in process) gets no push from that instant until it is off the list, and
 * cannot register a chat. Real list file, real worker, the fake Bot API.
 */
const FAST = { globalPerSecond: 1000, chatIntervalMs: 1, groupIntervalMs: 1 };
const OTHER_LISTED = '0x00000000000000000000000000000000000000aa';
const LISTED_WALLET = '0x1111111111111111111111111111111111111111';
const CLEAN_WALLET = '0x2222222222222222222222222222222222222222';

function listFile(t: { after(fn: () => void): void }) {
  const path = join(tempDir(t), 'sdn.txt');
  const write = (...addresses: string[]) => writeFileSync(path, `# test list\n${addresses.join('\n')}\n`);
  write(OTHER_LISTED);
  return { path, write };
}

test('a wallet listed by a reload gets nothing pushed: queued rows are withheld, new signals are not queued, and pushes resume once it is delisted', async (t) => {
  const bot = await startFakeBotApi();
  t.after(() => bot.close());
  const file = listFile(t);
  const list = loadSanctionsList({ path: file.path });
  const logger = memoryLogger();
  const watcher = watchSanctionsList(list, { logger, clock: systemClock });
  const { db } = testApp(t, { deps: { sanctions: list } });
  const outbox = createOutbox(db, {
    clock: systemClock,
    screen: sanctionsScreen(list, { required: true }),
    reader: createStores(db).reader,
  });
  const messenger = createBotMessenger({ token: bot.token, apiUrl: bot.url, limits: FAST });
  const worker = createDeliveryWorker({ outbox, messenger, clock: systemClock, logger, termsUrl: 'https://t.example' });
  t.after(() => worker.stop());
  registerChat(db, LISTED_WALLET, '100', null);
  registerChat(db, CLEAN_WALLET, '200', null);
  grant(db, LISTED_WALLET, 'nyc', 10);
  grant(db, CLEAN_WALLET, 'nyc', 10);
  const signal = (seq: number) => {
    const s = signalFixture({ seq, new: { ...signalFixture().new, bucket: `b${seq}` } });
    return db.transaction(() => {
      insertSignal(db, s);
      return outbox.enqueue(s);
    })();
  };
  const received = (chatId: string) => bot.messages.filter((m) => m.chatId === chatId).length;

  worker.start();
  signal(1);
  await worker.whenIdle();
  assert.deepEqual([received('100'), received('200')], [1, 1], 'before the listing both chats get the signal');

  // Signal 2 is queued while the wallet is still clean; the list changes before the worker sends.
  await worker.stop();
  signal(2);
  file.write(OTHER_LISTED, LISTED_WALLET);
  watcher.reload('SIGHUP');
  assert.equal(list.has(LISTED_WALLET), true);
  const w2 = createDeliveryWorker({ outbox, messenger, clock: systemClock, logger, termsUrl: 'https://t.example' });
  t.after(() => w2.stop());
  w2.start();
  await w2.whenIdle();
  // A signal arriving while listed is written failed at once, inside its own transaction.
  assert.equal(signal(3), 2, 'one row per entitled registration, the listed one already failed');
  w2.wake();
  await w2.whenIdle();
  assert.deepEqual([received('100'), received('200')], [1, 3], 'nothing more reaches the listed wallet');
  const listedRows = outboxRows(db).filter((r) => r.wallet === LISTED_WALLET);
  assert.deepEqual(
    listedRows.map((r) => [r.seq, r.status, r.last_error, r.attempts]),
    [
      [1, 'sent', null, 1],
      [2, 'failed', SANCTIONED_NOT_PUSHED, 0],
      [3, 'failed', SANCTIONED_NOT_PUSHED, 0],
    ],
    'withheld, never attempted, and never sent later (the signals stay readable through GET /v1/signals)',
  );

  // Off the list again: the next signal is pushed; the withheld ones stay withheld.
  file.write(OTHER_LISTED);
  watcher.reload('SIGHUP');
  signal(4);
  w2.wake();
  await w2.whenIdle();
  assert.deepEqual([received('100'), received('200')], [2, 4]);
  assert.match(bot.messages.filter((m) => m.chatId === '100').at(-1)!.text, /signal #4/);
});

test('a send waiting for its pacing slot is withdrawn if its wallet is listed meanwhile; nothing reaches the bot', async (t) => {
  const bot = await startFakeBotApi();
  t.after(() => bot.close());
  // A clock that stands still: the second message's slot is 300 ms away however slow the machine.
  const messenger = createBotMessenger({
    token: bot.token,
    apiUrl: bot.url,
    limits: { globalPerSecond: 1000, chatIntervalMs: 300, groupIntervalMs: 300 },
    clock: manualClock(Date.now()),
  });
  let listed = false;
  await messenger.send('100', 'first');
  const second = messenger.send('100', 'second', { cancelIf: () => (listed ? SANCTIONED_NOT_PUSHED : null) });
  listed = true; // the reload lands while the second message waits 300 ms for the chat's slot
  await assert.rejects(second, (err: unknown) => {
    assert.ok(err instanceof MessengerError);
    assert.equal(err.kind, 'cancelled');
    assert.equal(err.retryable, false);
    assert.equal(err.message, SANCTIONED_NOT_PUSHED);
    return true;
  });
  assert.deepEqual(
    bot.messages.map((m) => m.text),
    ['first'],
  );
});

test('with screening required and no list loaded, the worker holds every row (nothing sent, nothing failed)', async (t) => {
  const bot = await startFakeBotApi();
  t.after(() => bot.close());
  const list = loadSanctionsList({ path: join(tempDir(t), 'missing.txt') });
  const { db } = testApp(t, { deps: { sanctions: list } });
  const outbox = createOutbox(db, {
    clock: systemClock,
    screen: sanctionsScreen(list, { required: true }),
    reader: createStores(db).reader,
  });
  const messenger = createBotMessenger({ token: bot.token, apiUrl: bot.url, limits: FAST });
  const logger = memoryLogger();
  const worker = createDeliveryWorker({ outbox, messenger, clock: systemClock, logger, termsUrl: 'https://t.example' });
  t.after(() => worker.stop());
  registerChat(db, CLEAN_WALLET, '200', null);
  grant(db, CLEAN_WALLET, 'nyc', 10);
  db.transaction(() => {
    insertSignal(db, signalFixture());
    outbox.enqueue(signalFixture());
  })();
  worker.start();
  await worker.whenIdle();
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(bot.messages.length, 0);
  assert.deepEqual(
    outboxRows(db).map((r) => r.status),
    ['queued'],
  );
  assert.ok(logger.lines.some((l) => l.includes('sanctions screening unavailable; deliveries held')));
});

test('registration: a listed wallet gets 403 with the spec string and no test message; unavailable screening is 503; a delete stays open', async (t) => {
  const bot = await startFakeBotApi();
  t.after(() => bot.close());
  const file = listFile(t);
  const list = loadSanctionsList({ path: file.path });
  const messenger = createBotMessenger({ token: bot.token, apiUrl: bot.url, limits: FAST });
  const env = testApp(t, { env: { OFAC_REQUIRED: 'true' }, deps: { sanctions: list, messenger } });
  const f = inApp(env.app);
  const account = privateKeyToAccount(generatePrivateKey());
  const now = env.clock.now();

  assert.equal(await registerOverHttp(f, account, '300', 'nyc', now), 200);
  assert.equal(bot.messages.length, 1, 'the clean registration sent its test message');

  file.write(OTHER_LISTED, account.address);
  assert.equal(list.reload().ok, true);
  const res = await f('/v1/delivery/messenger', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(await signed(account, '301', 'set', now)),
  });
  assert.equal(res.status, 403);
  const body = (await res.json()) as { error: string; reason: string; disclaimer: string };
  assert.equal(body.error, 'wallet is sanctioned; payment refused');
  assert.equal(body.reason, 'a sanctioned wallet cannot register a chat');
  assert.ok(body.disclaimer);
  assert.equal(bot.messages.length, 1, 'no test message to a chat a listed wallet names');
  assert.equal(
    env.db
      .prepare('SELECT chat_id FROM delivery_registrations WHERE wallet = ?')
      .pluck()
      .get(account.address.toLowerCase()),
    '300',
    'the earlier registration is unchanged',
  );
  // A listed wallet may still remove its registration: that only stops pushes.
  const del = await f('/v1/delivery/messenger', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(await signed(account, '', 'delete', now)),
  });
  assert.equal(del.status, 200);

  // Required screening with no list in force fails closed.
  const missing = loadSanctionsList({ path: join(tempDir(t), 'missing.txt') });
  const closed = testApp(t, { env: { OFAC_REQUIRED: 'true' }, deps: { sanctions: missing, messenger } });
  const g = inApp(closed.app);
  const other = privateKeyToAccount(generatePrivateKey());
  const r503 = await g('/v1/delivery/messenger', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(await signed(other, '302', 'set', closed.clock.now())),
  });
  assert.equal(r503.status, 503);
  assert.equal(((await r503.json()) as { error: string }).error, 'sanctions screening unavailable');
  assert.equal(bot.messages.length, 1);
});

async function signed(
  account: ReturnType<typeof privateKeyToAccount>,
  chatId: string,
  action: 'set' | 'delete',
  nowMs: number,
) {
  const timestamp = Math.floor(nowMs / 1000);
  const signature = await account.signTypedData(
    deliveryTypedData({ wallet: account.address, chatId, citySlug: '', action, timestamp }),
  );
  return { wallet: account.address, chatId: chatId || undefined, citySlug: '', action, signature, timestamp };
}
