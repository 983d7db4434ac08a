import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { parseLabel } from '../../src/buckets/labels.ts';
import { createBotMessenger } from '../../src/delivery/messenger.ts';
import { createOutbox } from '../../src/delivery/outbox.ts';
import { createDeliveryWorker } from '../../src/delivery/worker.ts';
import { systemClock } from '../../src/lib/clock.ts';
import type { SignalStore } from '../../src/signals/store.ts';
import type { MarketBucketRef } from '../../src/sources/market/types.ts';
import { testApp } from '../helpers/app.ts';
import { startFakeBotApi } from '../fakes/bot-api.ts';
import { buy, inApp } from '../payments/buy.ts';
import { registerOverHttp, emptyScreen } from './fixtures.ts';

type StoreSignalInput = Parameters<SignalStore['storeSignal']>[0];

const LADDER: MarketBucketRef[] = [
  '79°F or below',
  '80-81°F',
  '82-83°F',
  '84-85°F',
  '86-87°F',
  '88-89°F',
  '90°F or higher',
].map((label, i) => ({
  ...parseLabel(label)!,
  conditionId: '0x' + String(i + 1).padStart(64, '0'),
}));

test('end to end: a wallet buys a bundle, registers a chat, crossings happen, exactly the entitled signals arrive once each', async (t) => {
  const bot = await startFakeBotApi();
  t.after(() => bot.close());
  // One messenger for route and worker, as main.ts wires it; pacing loosened so the test is quick.
  const messenger = createBotMessenger({
    token: bot.token,
    apiUrl: bot.url,
    limits: { globalPerSecond: 200, chatIntervalMs: 20, groupIntervalMs: 20 },
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
  });
  worker.start();
  t.after(() => worker.stop());
  const nyc = env.deps.catalog.get('nyc')!;

  const buyer = privateKeyToAccount(generatePrivateKey()); // buys 2 nyc signals, registers nyc
  const allCities = privateKeyToAccount(generatePrivateKey()); // buys 2 nyc signals, registers every city
  const freeloader = privateKeyToAccount(generatePrivateKey()); // registers, never pays
  for (const account of [buyer, allCities]) {
    const { status, body } = await buy(f, account, 'nyc', 2, env.clock.now());
    assert.equal(status, 200);
    assert.equal(body.paidThroughSeq, 2);
  }
  assert.equal(await registerOverHttp(f, buyer, '1001', 'nyc', env.clock.now()), 200);
  assert.equal(await registerOverHttp(f, allCities, '-1002', '', env.clock.now()), 200);
  assert.equal(await registerOverHttp(f, freeloader, '1003', 'nyc', env.clock.now()), 200);
  assert.equal(bot.messages.length, 3, 'one test message per registration');
  const entitlementBefore = env.stores.entitlements.get(buyer.address.toLowerCase(), 'nyc');

  let nowMs = env.clock.now();
  const reading = (r: number): StoreSignalInput => {
    nowMs += 60_000;
    return {
      city: { slug: nyc.slug, displayName: nyc.displayName, unit: nyc.unit },
      targetDate: '2026-07-15',
      reading: r,
      buckets: LADDER,
      nowMs,
      marketUrl: 'https://polymarket.com/event/highest-temperature-in-nyc-on-july-15-2026',
      conditionId: '0x' + 'cd'.repeat(32),
      odds: {
        asOfMs: nowMs + 2_000,
        byLabel: new Map(LADDER.map((b) => [b.label, { yes: 0.1, no: 0.9, midpoint: 0.1 }])),
      },
      source: 'wu',
      observedAtMs: nowMs,
    };
  };
  const observe = (r: number) => {
    const signal = env.stores.signals.storeSignal(reading(r), { inTransaction: outbox.enqueue });
    if (signal) worker.wake();
    return signal;
  };

  assert.equal(observe(81), null, 'the first reading of the day is the baseline');
  assert.equal(observe(83)?.seq, 1);
  assert.equal(observe(83), null, 'no crossing, nothing stored');
  assert.equal(observe(85)?.seq, 2);
  assert.equal(observe(86)?.seq, 3, 'beyond both ceilings');
  await worker.whenIdle();

  const pushed = bot.messages.slice(3);
  const seqOf = (text: string) => Number(/signal #(\d+)/.exec(text)?.[1]);
  const byChat = (chat: string) =>
    pushed
      .filter((m) => m.chatId === chat)
      .map((m) => seqOf(m.text))
      .sort();
  assert.deepEqual(byChat('1001'), [1, 2]);
  assert.deepEqual(byChat('-1002'), [1, 2]);
  assert.deepEqual(byChat('1003'), [], 'a wallet without entitlement receives nothing');
  assert.equal(pushed.length, 4);
  assert.match(pushed.find((m) => m.chatId === '1001' && seqOf(m.text) === 2)!.text, /Bucket 82-83°F -> 84-85°F/);
  assert.deepEqual(
    env.stores.entitlements.get(buyer.address.toLowerCase(), 'nyc'),
    entitlementBefore,
    'delivery never touches entitlements',
  );

  // Buying again while behind lifts the ceiling past latestSeq; the next crossing is pushed.
  // (A later binding window, so the new authorization is a new payment rather than a replay.)
  env.clock.advance(5 * 60_000);
  const again = await buy(f, buyer, 'nyc', 2, env.clock.now());
  assert.equal(again.body.paidThroughSeq, 5);
  assert.equal(observe(88)?.seq, 4);
  await worker.whenIdle();
  assert.deepEqual(
    bot.messages.slice(7).map((m) => [m.chatId, seqOf(m.text)]),
    [['1001', 4]],
  );
  const statuses = env.db.prepare('SELECT status, count(*) AS n FROM delivery_outbox GROUP BY status').all();
  assert.deepEqual(statuses, [{ status: 'sent', n: 5 }]);
});
