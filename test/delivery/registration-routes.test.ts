import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { createBotMessenger } from '../../src/delivery/messenger.ts';
import { deliveryTypedData } from '../../src/delivery/typed-data.ts';
import { testApp, type TestEnv } from '../helpers/app.ts';
import { startFakeBotApi, type FakeBotApi } from '../fakes/bot-api.ts';
import { grant } from './fixtures.ts';

type T = { after(fn: () => unknown): void };
type Body = {
  wallet?: string;
  chatId?: string;
  citySlug?: string;
  action?: string;
  signature?: string;
  timestamp?: number;
};

const NOW_MS = Date.parse('2026-07-15T15:00:00Z');
const NOW_SEC = NOW_MS / 1000;

async function setup(
  t: T,
  opts: { bot?: boolean; timeoutMs?: number } = {},
): Promise<{ env: TestEnv; bot: FakeBotApi }> {
  const bot = await startFakeBotApi();
  t.after(() => bot.close());
  const messenger =
    opts.bot === false
      ? undefined
      : createBotMessenger({
          token: bot.token,
          apiUrl: bot.url,
          limits: { globalPerSecond: 1000, chatIntervalMs: 1, groupIntervalMs: 1 },
          timeoutMs: opts.timeoutMs,
        });
  const env = testApp(t, { nowMs: NOW_MS, deps: messenger ? { messenger } : {} });
  return { env, bot };
}

async function sign(
  account: PrivateKeyAccount,
  m: { wallet?: string; chatId?: string; citySlug?: string; action: string; timestamp: number },
  over: { chainId?: number; name?: string; types?: unknown } = {},
): Promise<string> {
  const typed = deliveryTypedData({
    wallet: m.wallet ?? account.address,
    chatId: m.chatId ?? '',
    citySlug: m.citySlug ?? '',
    action: m.action as 'set',
    timestamp: m.timestamp,
  });
  return account.signTypedData({
    ...typed,
    domain: {
      ...typed.domain,
      ...(over.chainId !== undefined ? { chainId: over.chainId } : {}),
      ...(over.name ? { name: over.name } : {}),
    },
    types: (over.types ?? typed.types) as typeof typed.types,
  });
}

async function signedBody(
  account: PrivateKeyAccount,
  b: { chatId?: string; citySlug?: string; action: 'set' | 'delete'; timestamp?: number },
): Promise<Body> {
  const timestamp = b.timestamp ?? NOW_SEC;
  const body: Body = {
    wallet: account.address,
    action: b.action,
    timestamp,
    signature: await sign(account, { ...b, timestamp }),
  };
  if (b.chatId !== undefined) body.chatId = b.chatId;
  if (b.citySlug !== undefined) body.citySlug = b.citySlug;
  return body;
}

async function post(env: TestEnv, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await env.app.request('/v1/delivery/messenger', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const json = (await res.json()) as Record<string, unknown>;
  assert.equal(typeof json.disclaimer, 'string', 'every answer carries the disclaimer');
  return { status: res.status, json };
}

function registration(env: TestEnv, wallet: string) {
  return env.db
    .prepare('SELECT chat_id, city FROM delivery_registrations WHERE wallet = ?')
    .get(wallet.toLowerCase()) as { chat_id: string; city: string | null } | undefined;
}

test('set: a test message goes out first, then the registration is stored; entitlements are untouched', async (t) => {
  const { env, bot } = await setup(t);
  const account = privateKeyToAccount(generatePrivateKey());
  grant(env.db, account.address, 'nyc', 7);
  const before = env.db.prepare('SELECT * FROM entitlements').all();
  const { status, json } = await post(
    env,
    await signedBody(account, { chatId: '123456789', citySlug: 'nyc', action: 'set' }),
  );
  assert.equal(status, 200);
  assert.deepEqual(
    { ...json, disclaimer: undefined },
    {
      ok: true,
      wallet: account.address.toLowerCase(),
      chatId: '123456789',
      citySlug: 'nyc',
      action: 'set',
      idempotent: false,
      disclaimer: undefined,
    },
  );
  assert.equal(bot.messages.length, 1);
  assert.equal(bot.messages[0]!.chatId, '123456789');
  assert.match(bot.messages[0]!.text, new RegExp(`for ${env.deps.catalog.get('nyc')!.displayName}\\.`));
  assert.deepEqual(registration(env, account.address), { chat_id: '123456789', city: 'nyc' });
  assert.deepEqual(env.db.prepare('SELECT * FROM entitlements').all(), before);
  assert.equal(
    (env.db.prepare('SELECT count(*) AS n FROM payments').get() as { n: number }).n,
    0,
    'nothing is ever charged',
  );
});

test('an empty or absent citySlug registers every city (stored as null); a later set replaces the chat', async (t) => {
  const { env } = await setup(t);
  const account = privateKeyToAccount(generatePrivateKey());
  const empty = await post(env, await signedBody(account, { chatId: '-1001234567890', citySlug: '', action: 'set' }));
  assert.equal(empty.status, 200);
  assert.equal(empty.json.citySlug, null);
  assert.deepEqual(registration(env, account.address), { chat_id: '-1001234567890', city: null });
  const absent = await post(
    env,
    await signedBody(account, { chatId: '@isocast_feed', action: 'set', timestamp: NOW_SEC + 1 }),
  );
  assert.equal(absent.status, 200);
  assert.deepEqual(registration(env, account.address), { chat_id: '@isocast_feed', city: null });
});

test('delete removes the registration and echoes what was removed; deleting nothing is 404', async (t) => {
  const { env, bot } = await setup(t);
  const account = privateKeyToAccount(generatePrivateKey());
  const none = await post(env, await signedBody(account, { action: 'delete' }));
  assert.equal(none.status, 404);
  assert.equal(none.json.error, 'unknown city');
  assert.equal(none.json.reason, 'no delivery registration to delete');
  await post(env, await signedBody(account, { chatId: '555', citySlug: 'london', action: 'set' }));
  const del = await post(env, await signedBody(account, { action: 'delete', timestamp: NOW_SEC + 1 }));
  assert.equal(del.status, 200);
  assert.deepEqual(
    [del.json.chatId, del.json.citySlug, del.json.action, del.json.idempotent],
    ['555', 'london', 'delete', false],
  );
  assert.equal(registration(env, account.address), undefined);
  assert.equal(bot.messages.length, 1, 'delete sends nothing');
});

test('400: invalid wallet, bad action, missing chatId on set, missing signature or timestamp, malformed body', async (t) => {
  const { env, bot } = await setup(t);
  const account = privateKeyToAccount(generatePrivateKey());
  const good = await signedBody(account, { chatId: '1', action: 'set' });
  const cases: [unknown, RegExp][] = [
    [{ ...good, wallet: '0x1234' }, /invalid wallet/],
    [{ ...good, wallet: undefined }, /wallet is required/],
    [{ ...good, action: 'update' }, /invalid action/],
    [{ ...good, action: undefined }, /action is required/],
    [{ ...good, chatId: undefined }, /chatId is required when action is set/],
    [{ ...good, chatId: '' }, /chatId is required when action is set/],
    [{ ...good, chatId: 42 }, /invalid chatId/],
    [{ ...good, signature: undefined }, /signature is required/],
    [{ ...good, signature: 'abc' }, /invalid signature/],
    [{ ...good, timestamp: undefined }, /timestamp is required/],
    [{ ...good, timestamp: '1784127600' }, /invalid timestamp/],
    [{ ...good, timestamp: NOW_SEC + 0.5 }, /invalid timestamp/],
    ['not json', /JSON object/],
    [[good], /JSON object/],
  ];
  for (const [body, error] of cases) {
    const { status, json } = await post(env, body);
    assert.equal(status, 400, JSON.stringify(body));
    assert.match(String(json.error), error);
  }
  assert.equal(bot.requests.length, 0);
});

test('401 stale timestamp beyond 600 s either way; exactly 600 s is accepted', async (t) => {
  const { env } = await setup(t);
  const account = privateKeyToAccount(generatePrivateKey());
  for (const skew of [-601, 601, -100_000]) {
    const { status, json } = await post(
      env,
      await signedBody(account, { chatId: '1', action: 'set', timestamp: NOW_SEC + skew }),
    );
    assert.equal(status, 401);
    assert.equal(json.error, 'stale timestamp');
  }
  assert.equal(
    (await post(env, await signedBody(account, { chatId: '1', action: 'set', timestamp: NOW_SEC - 600 }))).status,
    200,
  );
  assert.equal(
    (await post(env, await signedBody(account, { chatId: '1', action: 'set', timestamp: NOW_SEC + 600 }))).status,
    200,
  );
});

test('401 signature verification failed: another wallet, reordered fields, wrong chain id, wrong name, altered field, garbage', async (t) => {
  const { env, bot } = await setup(t);
  const account = privateKeyToAccount(generatePrivateKey());
  const other = privateKeyToAccount(generatePrivateKey());
  const m = { wallet: account.address, chatId: '77', citySlug: 'nyc', action: 'set', timestamp: NOW_SEC };
  const base = { wallet: account.address, chatId: '77', citySlug: 'nyc', action: 'set', timestamp: NOW_SEC };
  const reordered = {
    MessengerDelivery: [
      { name: 'chatId', type: 'string' },
      { name: 'wallet', type: 'address' },
      { name: 'citySlug', type: 'string' },
      { name: 'action', type: 'string' },
      { name: 'timestamp', type: 'uint256' },
    ],
  };
  const bodies: Body[] = [
    { ...base, signature: await sign(other, m) },
    { ...base, signature: await sign(account, m, { types: reordered }) },
    { ...base, signature: await sign(account, m, { chainId: 1 }) },
    { ...base, signature: await sign(account, m, { chainId: 84532 }) },
    { ...base, signature: await sign(account, m, { name: 'isocast' }) },
    { ...base, chatId: '78', signature: await sign(account, m) },
    { ...base, citySlug: 'london', signature: await sign(account, m) },
    { ...base, timestamp: NOW_SEC + 1, signature: await sign(account, m) },
    { ...base, signature: '0x' + '11'.repeat(65) },
    { ...base, signature: '0xdead' },
  ];
  for (const body of bodies) {
    const { status, json } = await post(env, body);
    assert.equal(status, 401);
    assert.equal(json.error, 'signature verification failed');
  }
  assert.equal(bot.requests.length, 0);
  assert.equal(registration(env, account.address), undefined);
});

test('a wallet written in any letter case verifies and is stored lowercase', async (t) => {
  const { env } = await setup(t);
  const account = privateKeyToAccount(generatePrivateKey());
  const body = await signedBody(account, { chatId: '9', action: 'set' });
  for (const [i, wallet] of [account.address.toLowerCase(), '0x' + account.address.slice(2).toUpperCase()].entries()) {
    const b = { ...body, wallet, timestamp: NOW_SEC + i + 1 };
    b.signature = await sign(account, { chatId: '9', action: 'set', timestamp: b.timestamp });
    const { status, json } = await post(env, b);
    assert.equal(status, 200);
    assert.equal(json.wallet, account.address.toLowerCase());
  }
});

test('404 unknown city, checked after the signature', async (t) => {
  const { env, bot } = await setup(t);
  const account = privateKeyToAccount(generatePrivateKey());
  const { status, json } = await post(
    env,
    await signedBody(account, { chatId: '1', citySlug: 'atlantis', action: 'set' }),
  );
  assert.equal(status, 404);
  assert.equal(json.error, 'unknown city');
  assert.equal(bot.requests.length, 0);
});

test('502 when the test message fails: nothing is stored, and the same signed body may be retried once the chat works', async (t) => {
  const { env, bot } = await setup(t);
  const account = privateKeyToAccount(generatePrivateKey());
  bot.behave('404404', { kind: 'not_found' });
  const body = await signedBody(account, { chatId: '404404', action: 'set' });
  const failed = await post(env, body);
  assert.equal(failed.status, 502);
  assert.equal(failed.json.error, 'test message failed');
  assert.equal(failed.json.reason, 'Bad Request: chat not found');
  assert.equal(registration(env, account.address), undefined);
  bot.behave('404404', { kind: 'ok' });
  const retried = await post(env, body);
  assert.equal(retried.status, 200);
  assert.equal(retried.json.idempotent, false);
  assert.deepEqual(registration(env, account.address), { chat_id: '404404', city: null });
});

test('502 when no bot is configured', async (t) => {
  const { env } = await setup(t, { bot: false });
  const account = privateKeyToAccount(generatePrivateKey());
  const { status, json } = await post(env, await signedBody(account, { chatId: '1', action: 'set' }));
  assert.equal(status, 502);
  assert.equal(json.error, 'test message failed');
  assert.match(String(json.reason), /not configured/);
  assert.equal(registration(env, account.address), undefined);
});

test('a signed body is accepted once: a replay changes nothing and says so, even after a later delete', async (t) => {
  const { env, bot } = await setup(t);
  const account = privateKeyToAccount(generatePrivateKey());
  const set = await signedBody(account, { chatId: '31337', citySlug: 'nyc', action: 'set' });
  assert.equal((await post(env, set)).status, 200);
  const again = await post(env, set);
  assert.equal(again.status, 200);
  assert.equal(again.json.idempotent, true);
  assert.equal(bot.messages.length, 1, 'no second test message');
  const del = await signedBody(account, { action: 'delete', timestamp: NOW_SEC + 5 });
  assert.equal((await post(env, del)).status, 200);
  // An eavesdropper replaying the old set inside the window cannot re-register the chat.
  const replayedSet = await post(env, set);
  assert.equal(replayedSet.status, 200);
  assert.equal(replayedSet.json.idempotent, true);
  assert.equal(registration(env, account.address), undefined);
  // Nor can a replayed delete remove a registration made since.
  assert.equal(
    (await post(env, await signedBody(account, { chatId: '31338', action: 'set', timestamp: NOW_SEC + 6 }))).status,
    200,
  );
  const replayedDelete = await post(env, del);
  assert.equal(replayedDelete.json.idempotent, true);
  assert.deepEqual(registration(env, account.address), { chat_id: '31338', city: null });
  assert.equal(bot.messages.length, 2);
});

test('a copy arriving while the first is still sending its test message gets 409 and sends nothing', async (t) => {
  const { env, bot } = await setup(t, { timeoutMs: 1_500 });
  const account = privateKeyToAccount(generatePrivateKey());
  bot.behave('600', { kind: 'hang' });
  const body = await signedBody(account, { chatId: '600', action: 'set' });
  const first = post(env, body);
  await bot.waitForMessages(1);
  const second = await post(env, body);
  assert.equal(second.status, 409);
  const firstDone = await first;
  assert.equal(firstDone.status, 502, 'an unanswered test message is a failed test message');
  assert.equal(bot.requests.length, 1);
  assert.equal(registration(env, account.address), undefined);
});
