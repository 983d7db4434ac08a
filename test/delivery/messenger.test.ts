import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { createBotMessenger, MessengerError, type Messenger } from '../../src/delivery/messenger.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { startFakeBotApi, type FakeBotApi } from '../fakes/bot-api.ts';

const FAST = { globalPerSecond: 1000, chatIntervalMs: 1, groupIntervalMs: 1 };

async function fakeBot(t: { after(fn: () => Promise<void>): void }): Promise<FakeBotApi> {
  const bot = await startFakeBotApi();
  t.after(() => bot.close());
  return bot;
}

async function failure(p: Promise<void>): Promise<MessengerError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof MessengerError, `not a MessengerError: ${String(err)}`);
    return err;
  }
  assert.fail('send succeeded');
}

/** A port on 127.0.0.1 that nothing listens on. */
async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

test('a message goes out on the Bot API wire format: token in the path, numeric chat_id, plain text', async (t) => {
  const bot = await fakeBot(t);
  const m = createBotMessenger({ token: bot.token, apiUrl: bot.url, limits: FAST });
  assert.equal(m.configured, true);
  await m.send('123456789', 'hello');
  await m.send('@isocast_channel', 'to a channel');
  assert.equal(bot.messages.length, 2);
  assert.equal(bot.messages[0]!.body.chat_id, 123456789);
  assert.equal(bot.messages[0]!.text, 'hello');
  assert.deepEqual(bot.messages[0]!.body.link_preview_options, { is_disabled: true });
  assert.equal(bot.messages[1]!.body.chat_id, '@isocast_channel');
});

test('without a bot token nothing is sent and the error says so', async () => {
  const m = createBotMessenger({ apiUrl: 'http://127.0.0.1:9' });
  assert.equal(m.configured, false);
  const e = await failure(m.send('1', 'x'));
  assert.equal(e.kind, 'not_configured');
  assert.equal(e.retryable, false);
});

test('ok:false answers become clear errors; only those that cannot have delivered are retryable', async (t) => {
  const bot = await fakeBot(t);
  const m = createBotMessenger({ token: bot.token, apiUrl: bot.url, limits: FAST, timeoutMs: 300 });
  const cases: {
    chat: string;
    setup: Parameters<FakeBotApi['behave']>[1];
    kind: string;
    retryable: boolean;
    message?: RegExp;
  }[] = [
    {
      chat: '10',
      setup: { kind: 'not_found' },
      kind: 'rejected',
      retryable: false,
      message: /chat not found/,
    },
    {
      chat: '11',
      setup: { kind: 'blocked' },
      kind: 'rejected',
      retryable: false,
      message: /bot was blocked/,
    },
    { chat: '12', setup: { kind: 'server_error' }, kind: 'server_error', retryable: true, message: /Bad Gateway/ },
    { chat: '13', setup: { kind: 'hang' }, kind: 'ambiguous', retryable: false, message: /timed out/ },
    { chat: '14', setup: { kind: 'garbage' }, kind: 'ambiguous', retryable: false, message: /HTTP 200/ },
  ];
  for (const c of cases) {
    bot.behave(c.chat, c.setup);
    const e = await failure(m.send(c.chat, 'x'));
    assert.equal(e.kind, c.kind, c.chat);
    assert.equal(e.retryable, c.retryable, c.chat);
    if (c.message) assert.match(e.message, c.message);
  }
  const wrongToken = createBotMessenger({ token: '999:wrong-token-wrong-token-wrong', apiUrl: bot.url, limits: FAST });
  const e = await failure(wrongToken.send('1', 'x'));
  assert.equal(e.kind, 'rejected');
  assert.match(e.message, /Unauthorized/);
});

test('a 429 carries retry_after and holds every later send for that long', async (t) => {
  const bot = await fakeBot(t);
  const m = createBotMessenger({ token: bot.token, apiUrl: bot.url, limits: FAST });
  bot.behave('20', { kind: 'rate_limited', retryAfterSec: 30, times: 1 });
  const e = await failure(m.send('20', 'x'));
  assert.equal(e.kind, 'rate_limited');
  assert.equal(e.retryable, true);
  assert.equal(e.retryAfterMs, 30_000);
  assert.ok(m.waitMs('20') > 29_000);
  assert.ok(m.waitMs('21') > 29_000, 'the pause is global: the platform does not say which limit was hit');
  const busy = await failure(m.send('21', 'x', { maxWaitMs: 5_000 }));
  assert.equal(busy.kind, 'busy');
  assert.equal(busy.retryable, true);
  assert.equal(bot.requests.length, 1, 'nothing left while paused');
});

test('a refused connection is known not to have delivered; the send is retryable', async () => {
  const m = createBotMessenger({
    token: '123:abcdefghijklmnopqrstuvwxyz',
    apiUrl: `http://127.0.0.1:${await closedPort()}`,
    limits: FAST,
  });
  const e = await failure(m.send('1', 'x'));
  assert.equal(e.kind, 'unreachable');
  assert.equal(e.retryable, true);
});

test('per-chat pacing: a second message to the same chat waits, another chat does not', async (t) => {
  const bot = await fakeBot(t);
  const m: Messenger = createBotMessenger({
    token: bot.token,
    apiUrl: bot.url,
    limits: { globalPerSecond: 1000, chatIntervalMs: 60_000, groupIntervalMs: 60_000 },
  });
  await m.send('30', 'first');
  assert.ok(m.waitMs('30') > 59_000);
  assert.ok(m.waitMs('31') <= 1);
  const e = await failure(m.send('30', 'second', { maxWaitMs: 1_000 }));
  assert.equal(e.kind, 'busy');
  await m.send('31', 'other chat');
  assert.deepEqual(
    bot.messages.map((x) => x.text),
    ['first', 'other chat'],
  );
});

test('the bot token never appears in errors or log lines', async (t) => {
  const bot = await fakeBot(t);
  const lines: string[] = [];
  const logger = createLogger({ level: 'debug', write: (l) => lines.push(l) });
  const m = createBotMessenger({ token: bot.token, apiUrl: bot.url, limits: FAST, timeoutMs: 200 });
  const unreachable = createBotMessenger({
    token: bot.token,
    apiUrl: `http://127.0.0.1:${await closedPort()}`,
    limits: FAST,
  });
  bot.behave('40', { kind: 'not_found' });
  bot.behave('41', { kind: 'hang' });
  for (const send of [() => m.send('40', 'x'), () => m.send('41', 'x'), () => unreachable.send('1', 'x')]) {
    const e = await failure(send());
    logger.warn('send failed', { err: e, reason: e.message, kind: e.kind });
    assert.ok(!e.message.includes(bot.token));
    assert.ok(!String(e.stack).includes(bot.token));
  }
  assert.equal(lines.length, 3);
  for (const l of lines) assert.ok(!l.includes(bot.token) && !l.includes(bot.token.split(':')[1]!), l);
});
