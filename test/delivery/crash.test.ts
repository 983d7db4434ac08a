import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { openDb } from '../../src/db/open.ts';
import { createBotMessenger } from '../../src/delivery/messenger.ts';
import { createOutbox } from '../../src/delivery/outbox.ts';

const INTERRUPTED_ERROR = 'interrupted while sending; outcome unknown, not resent';
import { createDeliveryWorker } from '../../src/delivery/worker.ts';
import { systemClock } from '../../src/lib/clock.ts';
import { memoryLogger } from '../helpers/logger.ts';
import { tempDir } from '../helpers/app.ts';
import { startFakeBotApi } from '../fakes/bot-api.ts';
import { grant, insertSignal, outboxRows, registerChat, signalFixture, WALLET_A, emptyScreen } from './fixtures.ts';
import { createStores } from '../../src/stores.ts';

const CHILD = join(import.meta.dirname, 'crash-child.ts');

/**
 * A worker process is killed (SIGKILL: no cleanup runs) while a row is claimed, then a new worker
 * starts over the same database file, as after a restart. The row must be lost, never duplicated.
 */
async function crashThenRestart(t: { after(fn: () => unknown): void }, mode: 'claim' | 'send') {
  const dir = tempDir(t);
  const path = join(dir, 'isocast.db');
  const bot = await startFakeBotApi();
  t.after(() => bot.close());
  const db = openDb(path);
  t.after(() => db.close());
  registerChat(db, WALLET_A, '100', null);
  grant(db, WALLET_A, 'nyc', 10);
  const outbox = createOutbox(db, { clock: systemClock, screen: emptyScreen(), reader: createStores(db).reader });
  db.transaction(() => {
    insertSignal(db, signalFixture());
    outbox.enqueue(signalFixture());
  })();
  if (mode === 'send') bot.behave('100', { kind: 'hang' });

  const child = spawn(process.execPath, [CHILD, path, mode, bot.url, bot.token], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  t.after(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  let out = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (s: string) => {
    out += s;
  });
  if (mode === 'claim') {
    while (!out.includes('claimed')) await once(child.stdout, 'data');
  } else {
    await bot.waitForMessages(1);
  }
  child.kill('SIGKILL');
  await once(child, 'exit');
  assert.deepEqual(
    outboxRows(db).map((r) => r.status),
    ['sending'],
    'the claim was committed before the send',
  );

  // The restarted worker would deliver happily to this chat now; it must not.
  bot.behave('100', { kind: 'ok' });
  const worker = createDeliveryWorker({
    outbox,
    messenger: createBotMessenger({ token: bot.token, apiUrl: bot.url }),
    clock: systemClock,
    logger: memoryLogger(),
    termsUrl: 'x',
  });
  worker.start();
  await worker.whenIdle();
  await worker.stop();
  return { bot, rows: outboxRows(db) };
}

test('a crash between claim and send loses the message rather than duplicating it', async (t) => {
  const { bot, rows } = await crashThenRestart(t, 'claim');
  assert.equal(bot.messages.length, 0);
  assert.deepEqual(
    rows.map((r) => [r.status, r.last_error]),
    [['failed', INTERRUPTED_ERROR]],
  );
});

test('a crash after the platform took the message but before it was marked sent never resends it', async (t) => {
  const { bot, rows } = await crashThenRestart(t, 'send');
  assert.equal(bot.messages.length, 1);
  assert.equal(bot.requests.length, 1);
  assert.deepEqual(
    rows.map((r) => [r.status, r.last_error]),
    [['failed', INTERRUPTED_ERROR]],
  );
});
