import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { parseDeliveryBody } from '../../src/delivery/schemas.ts';
import { createBotMessenger } from '../../src/delivery/messenger.ts';
import { BOT_API_LIMITS, createPacer, type SendLimits } from '../../src/delivery/pacer.ts';
import { deliveryTypedData } from '../../src/delivery/typed-data.ts';
import { startFakeBotApi } from '../fakes/bot-api.ts';
import { listen, testApp } from '../helpers/app.ts';

/**
 * Issue 23 item 4: one chat, one key. Spellings of one chat share its test-message budget and its
 * pacing, and one client address cannot take the shared test lane from everyone else.
 */
const FAST = { globalPerSecond: 1000, chatIntervalMs: 1, groupIntervalMs: 1, testPerSecond: 1000 };

test('canonical chat ids: plain decimal numbers and lower-cased usernames; every other spelling is refused', () => {
  const ok: [string, string][] = [
    ['123456789', '123456789'],
    ['-1001234567890', '-1001234567890'],
    ['9007199254740991', '9007199254740991'],
    ['@Channel_Name', '@channel_name'],
    ['@abcd', '@abcd'],
  ];
  // The body's other fields well-formed (parsing checks their shape, not the signature).
  const parse = (chatId: string) =>
    parseDeliveryBody({ wallet: `0x${'1'.repeat(40)}`, action: 'set', signature: '0x00', timestamp: 0, chatId });
  for (const [raw, want] of ok) assert.equal(parse(raw).chat, want, raw);
  for (const raw of [
    '0123456789',
    '+123456789',
    ' 123456789',
    '123456789 ',
    '0',
    '-0',
    '--5',
    '9007199254740993',
    '1e9',
    '0x75bcd15',
    '@abc',
    '@1channel',
    '@chan-nel',
    'channel',
    '@' + 'a'.repeat(33),
  ]) {
    assert.throws(() => parse(raw), /^ApiError: invalid chatId: must be a chat number in plain decimal/, raw);
  }
  assert.throws(() => parse(''), /chatId is required when action is set/);
  const pacer = createPacer(BOT_API_LIMITS);
  pacer.reserve('@channel_name', 0);
  assert.equal(
    pacer.readyAt('@channel_name', 0),
    BOT_API_LIMITS.groupIntervalMs,
    'a public channel is paced as a group',
  );
});

type Client = { xff: string };

async function setBody(account: PrivateKeyAccount, chatId: string, nowMs: number): Promise<string> {
  const timestamp = Math.floor(nowMs / 1000);
  const signature = await account.signTypedData(
    deliveryTypedData({ wallet: account.address, chatId, citySlug: '', action: 'set', timestamp }),
  );
  return JSON.stringify({ wallet: account.address, chatId, citySlug: '', action: 'set', signature, timestamp });
}

async function setup(t: { after(fn: () => unknown): void }, limits: SendLimits = FAST) {
  const bot = await startFakeBotApi();
  t.after(() => bot.close());
  const messenger = createBotMessenger({ token: bot.token, apiUrl: bot.url, limits });
  // Each client below is its own address behind a trusted proxy; the request limits sit far above
  // these floods, so only the test-message budgets decide.
  const env = testApp(t, {
    env: {
      TRUSTED_PROXIES: '127.0.0.1',
      RATE_LIMIT_ADDRESS_PER_MIN: '6000',
      RATE_LIMIT_ADDRESS_BURST: '1000',
    },
    deps: { messenger },
  });
  const base = await listen(t, env.app.fetch);
  const post = async (body: string, client: Client) => {
    const r = await fetch(`${base}/v1/delivery/messenger`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': client.xff },
      body,
    });
    return { status: r.status, body: (await r.json()) as { error?: string; chatId?: string } };
  };
  return { bot, env, post };
}

test('seven spellings of one numeric chat from fresh wallets and addresses: only the plain one is taken, and the chat budget (3) holds', async (t) => {
  const { bot, env, post } = await setup(t);
  const spellings = [
    '123456789',
    '0123456789',
    '00123456789',
    '+123456789',
    ' 123456789',
    '123456789 ',
    '000123456789',
  ];
  const answers: number[] = [];
  let n = 0;
  for (const chat of spellings) {
    for (let i = 0; i < 3; i++) {
      const account = privateKeyToAccount(generatePrivateKey());
      const r = await post(await setBody(account, chat, env.clock.now()), { xff: `198.51.100.${++n}` });
      answers.push(r.status);
      if (r.status === 400) assert.match(r.body.error!, /^invalid chatId: must be a chat number in plain decimal/);
      if (r.status === 200) assert.equal(r.body.chatId, '123456789');
    }
  }
  const to = bot.messages.filter((m) => m.chatId === '123456789').length;
  t.diagnostic(`21 requests, 7 spellings: ${to} test messages to the chat (budget: 3 burst, 6 an hour)`);
  assert.equal(to, 3);
  assert.equal(bot.messages.length, 3);
  assert.deepEqual(
    answers.filter((s) => s !== 400),
    [200, 200, 200],
  );
});

test('twelve letter-case spellings of one @channel: one key, stored lower-cased, at most the chat budget of test messages', async (t) => {
  const { bot, env, post } = await setup(t);
  // Twelve distinct spellings: the letter at position i (1..12) upper-cased, the first one all upper.
  const spellings = Array.from({ length: 12 }, (_, i) =>
    i === 0 ? '@CHANNEL_NAME' : `@${[...'channel_name'].map((ch, j) => (j === i ? ch.toUpperCase() : ch)).join('')}`,
  );
  assert.equal(new Set(spellings).size, 12);
  const statuses: number[] = [];
  let n = 0;
  for (const chat of spellings) {
    const account = privateKeyToAccount(generatePrivateKey());
    const r = await post(await setBody(account, chat, env.clock.now()), { xff: `203.0.113.${++n}` });
    statuses.push(r.status);
    if (r.status === 200) assert.equal(r.body.chatId, '@channel_name');
  }
  t.diagnostic(`12 spellings of one @channel: ${bot.messages.length} test messages (budget: 3 burst, 6 an hour)`);
  assert.equal(statuses.filter((s) => s === 200).length, 3);
  assert.equal(statuses.filter((s) => s === 429).length, 9);
  assert.deepEqual(new Set(bot.messages.map((m) => m.body.chat_id)), new Set(['@channel_name']));
  assert.equal(bot.messages.length, 3);
  const stored = env.db.prepare('SELECT DISTINCT chat_id FROM delivery_registrations').pluck().all();
  assert.deepEqual(stored, ['@channel_name']);
});

test('a flood of random chats from fresh wallets on one address does not make another address wait past its test message limit', async (t) => {
  // Production pacing: the test lane is 2 messages a second, and a test message waits at most 5 s.
  const { bot, env, post } = await setup(t, BOT_API_LIMITS);
  const now = env.clock.now();
  const flood = await Promise.all(
    Array.from({ length: 40 }, (_, i) => setBody(privateKeyToAccount(generatePrivateKey()), `${7_000_000 + i}`, now)),
  );
  const legit = await Promise.all(
    Array.from({ length: 6 }, (_, i) => setBody(privateKeyToAccount(generatePrivateKey()), `${8_000_000 + i}`, now)),
  );
  const attacker = { xff: '198.51.100.66' };
  const floodDone = Promise.all(flood.map((b) => post(b, attacker).then((r) => r.status)));
  await new Promise((r) => setTimeout(r, 200));
  const legitStatuses: number[] = [];
  for (const b of legit) legitStatuses.push((await post(b, { xff: '203.0.113.9' })).status);
  const floodStatuses = await floodDone;
  t.diagnostic(
    `flood: ${floodStatuses.filter((s) => s === 200).length} x 200, ${floodStatuses.filter((s) => s === 429).length} x 429; other address: ${legitStatuses.join(',')}`,
  );
  assert.deepEqual(legitStatuses, [200, 200, 200, 200, 200, 200], 'every registration from the other address');
  assert.equal(floodStatuses.filter((s) => s === 200).length, 6, 'the flooding address: its burst of 6');
  assert.equal(floodStatuses.filter((s) => s === 429).length, 34);
  assert.equal(bot.messages.length, 12);
});
