import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { parseLabel } from '../../src/buckets/labels.ts';
import { createBotMessenger } from '../../src/delivery/messenger.ts';
import { createOutbox } from '../../src/delivery/outbox.ts';
import { deliveryTypedData } from '../../src/delivery/typed-data.ts';
import { createDeliveryWorker } from '../../src/delivery/worker.ts';
import { systemClock } from '../../src/lib/clock.ts';
import type { MarketBucketRef } from '../../src/sources/market/types.ts';
import { startFakeBotApi, type ChatBehaviour } from '../fakes/bot-api.ts';
import { testApp } from '../helpers/app.ts';
import { buy, inApp } from '../payments/buy.ts';
import { emptyScreen } from '../delivery/fixtures.ts';

/**
 * The Bot API misbehaving, end to end through the registration route and the outbox worker:
 * a failing bot refuses registrations without storing them; 429 and 5xx answers (known not to
 * have delivered) are retried until the message arrives once; an ambiguous answer (garbage, a
 * hang) is never resent even after the bot recovers. Nothing touches payments or entitlements.
 */
const LADDER: MarketBucketRef[] = [
  '79°F or below',
  '80-81°F',
  '82-83°F',
  '84-85°F',
  '86-87°F',
  '88-89°F',
  '90-91°F',
  '92°F or higher',
].map((label, i) => ({ ...parseLabel(label)!, conditionId: '0x' + String(i + 1).padStart(64, '0') }));

test('bot 5xx, 429, garbage and hangs: retried to exactly one message, or failed and never resent', {
  timeout: 30_000,
}, async (t) => {
  const bot = await startFakeBotApi();
  t.after(() => bot.close());
  const messenger = createBotMessenger({
    token: bot.token,
    apiUrl: bot.url,
    timeoutMs: 300,
    limits: { globalPerSecond: 200, chatIntervalMs: 10, groupIntervalMs: 10 },
  });
  const env = testApp(t, { deps: { messenger } });
  const f = inApp(env.app);
  const outbox = createOutbox(env.db, { clock: systemClock, screen: emptyScreen(), reader: env.stores.reader });
  const worker = createDeliveryWorker({
    outbox,
    messenger,
    clock: systemClock,
    logger: env.logger,
    termsUrl: env.config.TERMS_URL,
    options: { baseBackoffMs: 50, maxBackoffMs: 200 },
  });
  worker.start();
  t.after(() => worker.stop());

  const account = privateKeyToAccount(generatePrivateKey());
  const chat = '4242';
  const register = async () => {
    const timestamp = Math.floor(env.clock.now() / 1000);
    const signature = await account.signTypedData(
      deliveryTypedData({ wallet: account.address, chatId: chat, citySlug: 'nyc', action: 'set', timestamp }),
    );
    const res = await f('/v1/delivery/messenger', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        wallet: account.address,
        chatId: chat,
        citySlug: 'nyc',
        action: 'set',
        signature,
        timestamp,
      }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  bot.behave(chat, { kind: 'server_error' });
  const refused = await register();
  assert.equal(refused.status, 502);
  assert.equal(
    env.db.prepare('SELECT count(*) FROM delivery_registrations').pluck().get(),
    0,
    'nothing stored while the bot fails',
  );
  bot.behave(chat, { kind: 'ok' });
  env.clock.advance(1_000); // a new signed body (a new timestamp)
  assert.equal((await register()).status, 200);
  assert.equal((await buy(f, account, 'nyc', 20, env.clock.now())).status, 200);
  const entitlement = env.db.prepare('SELECT * FROM entitlements').all();

  const nyc = env.deps.catalog.get('nyc')!;
  let reading = 80;
  const crossing = () => {
    reading += 2;
    const nowMs = Date.now();
    const s = env.stores.signals.storeSignal(
      {
        city: { slug: nyc.slug, displayName: nyc.displayName, unit: nyc.unit },
        targetDate: '2026-07-15',
        reading,
        buckets: LADDER,
        nowMs,
        marketUrl: 'https://polymarket.com/event/highest-temperature-in-nyc-on-july-15-2026',
        conditionId: '0x' + 'cd'.repeat(32),
        odds: { asOfMs: nowMs, byLabel: new Map(LADDER.map((b) => [b.label, { yes: 0.2, no: 0.8, midpoint: 0.2 }])) },
        source: 'metar',
        observedAtMs: nowMs,
      },
      { inTransaction: outbox.enqueue },
    );
    worker.wake();
    return s!.seq;
  };
  const settled = async (seq: number) => {
    for (;;) {
      const status = env.db.prepare('SELECT status FROM delivery_outbox WHERE seq = ?').pluck().get(seq);
      if (status === 'sent' || status === 'failed') return status;
      await sleep(20);
    }
  };
  env.stores.signals.storeSignal({
    city: { slug: nyc.slug, displayName: nyc.displayName, unit: nyc.unit },
    targetDate: '2026-07-15',
    reading,
    buckets: LADDER,
    nowMs: Date.now(),
    marketUrl: 'https://polymarket.com/event/x',
    conditionId: null,
    odds: null,
    source: 'metar',
    observedAtMs: Date.now(),
  });

  const cases: [ChatBehaviour, 'sent' | 'failed'][] = [
    [{ kind: 'server_error', times: 2 }, 'sent'],
    [{ kind: 'rate_limited', retryAfterSec: 1, times: 1 }, 'sent'],
    [{ kind: 'garbage' }, 'failed'],
    [{ kind: 'hang' }, 'failed'],
    [{ kind: 'ok' }, 'sent'],
  ];
  const outcomes: string[] = [];
  for (const [behaviour] of cases) {
    bot.behave(chat, behaviour);
    const seq = crossing();
    outcomes.push(await settled(seq));
  }
  assert.deepEqual(
    outcomes,
    cases.map(([, want]) => want),
  );

  // The bot is healthy again; give the worker time to (wrongly) resend anything.
  bot.behave(chat, { kind: 'ok' });
  worker.wake();
  await sleep(400);
  await worker.whenIdle();
  const pushed = bot.messages
    .filter((m) => /^isocast signal #/.test(m.text))
    .map((m) => Number(/#(\d+)/.exec(m.text)![1]));
  // Every signal reached the platform exactly once: the ambiguous ones too (the fake recorded
  // them before misbehaving), which is why they must not be sent again.
  assert.deepEqual(pushed, [1, 2, 3, 4, 5]);
  const requests = bot.requests.filter((r) => r.chatId === chat).length;
  assert.equal(
    requests,
    2 + 3 + 2 + 1 + 1 + 1,
    'two registrations (one refused), 5xx x2 + ok, 429 + ok, garbage, hang, ok',
  );
  assert.deepEqual(
    env.db.prepare('SELECT * FROM entitlements').all(),
    entitlement,
    'delivery never touches entitlements',
  );
});
