import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createBotMessenger } from '../../src/delivery/messenger.ts';
import { createOutbox } from '../../src/delivery/outbox.ts';
import { deliveryTypedData } from '../../src/delivery/typed-data.ts';
import { createDeliveryWorker } from '../../src/delivery/worker.ts';
import { systemClock } from '../../src/lib/clock.ts';
import { createMetrics } from '../../src/lib/metrics.ts';
import { RATE_LIMITED_DOC } from '../../src/lib/schemas.ts';
import { startFakeBotApi } from '../fakes/bot-api.ts';
import { listen, testApp } from '../helpers/app.ts';
import { buy, over, signFor } from '../payments/buy.ts';
import { grant, insertSignal, registerChat, signalFixture, emptyScreen } from '../delivery/fixtures.ts';

const TOKEN = 'abuse-test-admin-token-0123456789abcdef';
const admin = { headers: { authorization: `Bearer ${TOKEN}` } };
const sample = (text: string, series: string) =>
  Number(new RegExp(`^${series.replace(/[{}()[\]."/]/g, '\\$&')} (\\d+)`, 'm').exec(text)?.[1] ?? 0);

test('a burst over the address limit gets 429 JSON with Retry-After, counted in /metrics; free reads are never limited', async (t) => {
  const metrics = createMetrics();
  const env = testApp(t, {
    env: { ADMIN_TOKEN: TOKEN, RATE_LIMIT_ADDRESS_PER_MIN: '6', RATE_LIMIT_ADDRESS_BURST: '5' },
    deps: { metrics },
  });
  const base = await listen(t, env.app.fetch);
  const sent = 40;
  const answers = await Promise.all(
    Array.from({ length: sent }, () => fetch(`${base}/v1/subscribe?city=nyc&count=2`, { method: 'POST' })),
  );
  const statuses = answers.map((r) => r.status);
  assert.equal(statuses.filter((s) => s === 402).length, 5, 'the burst');
  assert.equal(statuses.filter((s) => s === 429).length, sent - 5);
  const limited = answers.find((r) => r.status === 429)!;
  const body = (await limited.json()) as { error: string; retryAfterSeconds: number; disclaimer: string };
  assert.equal(body.error, 'rate limit exceeded; retry later');
  RATE_LIMITED_DOC.schema.parse(body); // the documented 429 shape (openapi.json)
  assert.ok(
    Number.isInteger(body.retryAfterSeconds) && body.retryAfterSeconds >= 1 && body.retryAfterSeconds <= 10,
    String(body.retryAfterSeconds),
  );
  assert.equal(limited.headers.get('retry-after'), String(body.retryAfterSeconds));
  assert.match(body.disclaimer, /not financial/);
  assert.equal(limited.headers.get('access-control-allow-origin'), '*', 'a browser client can read the 429');
  t.diagnostic(`burst: ${sent} requests sent, ${sent - 5} answered 429`);

  // The same budget covers the other limited routes; reads without a payment are not limited.
  assert.equal((await fetch(`${base}/v1/signals?city=nyc`, { headers: { 'x-payment': 'e30=' } })).status, 429);
  // x402 v2's payment header and a wallet sign-in cost a signature recovery too (issue 28).
  for (const header of ['payment-signature', 'sign-in-with-x'])
    assert.equal((await fetch(`${base}/v1/signals?city=nyc`, { headers: { [header]: 'e30=' } })).status, 429, header);
  // HEAD is the GET route: the same budget (issue 35 item 2).
  const head = await fetch(`${base}/v1/signals?city=nyc`, { method: 'HEAD', headers: { 'sign-in-with-x': 'e30=' } });
  assert.equal(head.status, 429);
  assert.equal((await fetch(`${base}/v1/delivery/messenger`, { method: 'POST', body: '{}' })).status, 429);
  assert.equal((await fetch(`${base}/v1/receipts`, { method: 'POST', body: '{}' })).status, 429);
  for (const path of ['/v1/cities', '/v1/cities/nyc', '/health', '/v1/sample?city=nyc'])
    assert.equal((await fetch(base + path)).status, 200, path);
  assert.equal(
    (await fetch(`${base}/v1/signals?city=nyc`)).status,
    402,
    'a read without payment is answered, not limited',
  );

  const text = await (await fetch(`${base}/metrics`, admin)).text();
  assert.equal(sample(text, 'isocast_rate_limited_total{limit="address",route="/v1/subscribe"}'), sent - 5);
  assert.equal(sample(text, 'isocast_rate_limited_total{limit="address",route="/v1/signals"}'), 4);
});

test('per payer wallet: a wallet over its budget gets 429 after its signature is checked; another wallet is unaffected', async (t) => {
  const env = testApp(t, {
    env: { RATE_LIMIT_ADDRESS_PER_MIN: '0', RATE_LIMIT_WALLET_PER_MIN: '1', RATE_LIMIT_WALLET_BURST: '2' },
  });
  const f = over(await listen(t, env.app.fetch));
  const a = privateKeyToAccount(generatePrivateKey());
  const b = privateKeyToAccount(generatePrivateKey());
  const now = env.clock.now();
  assert.equal((await buy(f, a, 'nyc', 2, now)).status, 200);
  assert.equal((await buy(f, a, 'london', 2, now)).status, 200);
  const third = await buy(f, a, 'paris', 2, now);
  assert.equal(third.status, 429);
  assert.ok(third.body.retryAfterSeconds >= 1);
  assert.equal(third.res.headers.get('retry-after'), String(third.body.retryAfterSeconds));
  assert.equal((await buy(f, b, 'nyc', 2, now)).status, 200);
  // Inline payment on the paid read shares the wallet budget.
  const p = await signFor(f, a, 'nyc', 2, now);
  assert.equal((await f('/v1/signals?city=nyc&count=2', { headers: { 'x-payment': p.xPayment } })).status, 429);
});

test('TRUSTED_PROXIES: behind a trusted proxy each forwarded client has its own budget; otherwise the header is ignored', async (t) => {
  const proxied = testApp(t, {
    env: { TRUSTED_PROXIES: '127.0.0.1/8,::1', RATE_LIMIT_ADDRESS_PER_MIN: '1', RATE_LIMIT_ADDRESS_BURST: '2' },
  });
  const base = await listen(t, proxied.app.fetch);
  const post = (xff: string) =>
    fetch(`${base}/v1/subscribe?city=nyc&count=2`, { method: 'POST', headers: { 'x-forwarded-for': xff } }).then(
      (r) => r.status,
    );
  // The client forged the left hop; the proxy appended the real one.
  assert.deepEqual(
    [await post('6.6.6.6, 198.51.100.1'), await post('7.7.7.7, 198.51.100.1'), await post('198.51.100.1')],
    [402, 402, 429],
  );
  assert.equal(await post('198.51.100.2'), 402);

  const direct = testApp(t, { env: { RATE_LIMIT_ADDRESS_PER_MIN: '1', RATE_LIMIT_ADDRESS_BURST: '2' } });
  const directBase = await listen(t, direct.app.fetch);
  const statuses = [];
  for (const xff of ['1.1.1.1', '2.2.2.2', '3.3.3.3']) {
    statuses.push(
      (
        await fetch(`${directBase}/v1/subscribe?city=nyc&count=2`, {
          method: 'POST',
          headers: { 'x-forwarded-for': xff },
        })
      ).status,
    );
  }
  assert.deepEqual(statuses, [402, 402, 429], 'an untrusted peer cannot pick its own key');
});

test('IPv6 clients behind a trusted proxy: seven spellings and neighbours in one /64 share one budget (issue 23.7)', async (t) => {
  const env = testApp(t, {
    env: { TRUSTED_PROXIES: '127.0.0.1,::1', RATE_LIMIT_ADDRESS_PER_MIN: '1', RATE_LIMIT_ADDRESS_BURST: '3' },
  });
  const base = await listen(t, env.app.fetch);
  const post = (xff: string) =>
    fetch(`${base}/v1/subscribe?city=nyc&count=2`, { method: 'POST', headers: { 'x-forwarded-for': xff } }).then(
      (r) => r.status,
    );
  const one64 = [
    '2001:db8:5:5::1',
    '2001:DB8:5:5::1',
    '2001:0db8:0005:0005:0000:0000:0000:0001',
    '2001:db8:5:5:0:0:0:1',
    '2001:db8:5:5::2',
    '2001:db8:5:5:dead:beef:1:1',
    '2001:db8:5:5:ffff::9',
  ];
  const statuses = [];
  for (const xff of one64) statuses.push(await post(xff));
  assert.deepEqual(statuses, [402, 402, 402, 429, 429, 429, 429], 'one budget of 3 for the whole /64');
  assert.equal(await post('2001:db8:5:6::1'), 402, 'the next /64 is another client');
  // IPv4-mapped spellings are the IPv4 client.
  const v4 = [];
  for (const xff of ['198.51.100.9', '::ffff:198.51.100.9', '::ffff:c633:6409', '198.51.100.9'])
    v4.push(await post(xff));
  assert.deepEqual(v4, [402, 402, 402, 429]);
  const next64 = [];
  for (const xff of ['2001:db8:5:6::2', '2001:db8:5:6:1::1', '2001:db8:5:6::3']) next64.push(await post(xff));
  assert.deepEqual(next64, [402, 402, 429], 'the next /64 keeps its own budget of 3, apart from the IPv4 client');
});

test('a flood of chat registrations while paid pushes are queued delays no paid push', async (t) => {
  const bot = await startFakeBotApi();
  t.after(() => bot.close());
  // Production per-chat spacing; a slower global rate than production so that each slot a test
  // message took from the paid pushes would add a visible 400 ms (more than the event loop stalls
  // the flood's signature checks cause on a loaded machine), and a test lane faster than the paid one.
  const limits = { globalPerSecond: 2.5, chatIntervalMs: 1100, groupIntervalMs: 3100, testPerSecond: 5 };
  const slotMs = 1000 / limits.globalPerSecond;
  const messenger = createBotMessenger({ token: bot.token, apiUrl: bot.url, limits });
  const metrics = createMetrics();
  const env = testApp(t, {
    // The flood comes from 8 addresses (behind a trusted proxy), 5 requests each before the
    // address limit: one address alone would now get only its own 6 test messages (issue 23.4).
    env: {
      ADMIN_TOKEN: TOKEN,
      TRUSTED_PROXIES: '127.0.0.1',
      RATE_LIMIT_ADDRESS_PER_MIN: '6',
      RATE_LIMIT_ADDRESS_BURST: '5',
    },
    deps: { messenger, metrics },
  });
  const base = await listen(t, env.app.fetch);

  // 30 entitled, registered wallets: each new signal queues 30 paid pushes.
  const PAID = 12;
  for (let i = 0; i < PAID; i++) {
    const w = '0x' + (i + 1).toString(16).padStart(40, '0');
    grant(env.db, w, 'nyc', 5);
    registerChat(env.db, w, `${9_000_000 + i}`, 'nyc');
  }
  const outbox = createOutbox(env.db, { clock: env.clock, screen: emptyScreen(), reader: env.stores.reader });
  const worker = createDeliveryWorker({
    outbox,
    messenger,
    clock: systemClock,
    logger: env.logger,
    termsUrl: env.config.TERMS_URL,
    metrics,
  });
  t.after(() => worker.stop());
  worker.start();
  /** Queues one signal's pushes, runs `during` meanwhile; returns each push's arrival after the enqueue. */
  const batch = async (seq: number, during: () => Promise<unknown>) => {
    const signal = signalFixture({ seq, new: { ...signalFixture().new, bucket: `b${seq}` } });
    insertSignal(env.db, signal);
    const from = bot.messages.length;
    const t0 = Date.now();
    assert.equal(env.db.transaction(() => outbox.enqueue(signal))(), PAID);
    worker.wake();
    await Promise.all([during(), worker.whenIdle()]);
    const paid = bot.messages.slice(from).filter((m) => m.chatId.startsWith('9'));
    assert.equal(paid.length, PAID, 'every paid push delivered');
    return paid.map((m) => m.atMs - t0);
  };

  // 150 registrations from fresh wallets, signed beforehand; 20 aim at one chat.
  const FLOOD = 150;
  const timestamp = Math.floor(env.clock.now() / 1000);
  const bodies = await Promise.all(
    Array.from({ length: FLOOD }, async (_, i) => {
      const account = privateKeyToAccount(generatePrivateKey());
      const chatId = i < 20 ? '5550000' : `${5_550_001 + i}`;
      const signature = await account.signTypedData(
        deliveryTypedData({ wallet: account.address, chatId, citySlug: '', action: 'set', timestamp }),
      );
      return JSON.stringify({ wallet: account.address, chatId, citySlug: '', action: 'set', signature, timestamp });
    }),
  );
  let statuses: number[] = [];
  // At 50 requests/s across the paid batch: an attacker's steady flood, from 8 addresses.
  const flood = async () => {
    statuses = await Promise.all(
      bodies.map(async (body, i) => {
        await new Promise((r) => setTimeout(r, i * 20));
        const r = await fetch(`${base}/v1/delivery/messenger`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-forwarded-for': `198.51.100.${i % 8}` },
          body,
        });
        await r.arrayBuffer();
        return r.status;
      }),
    );
  };

  // The same batch alone and under the flood, back to back on the same machine. A push's wait is
  // the time since the push before it (since the enqueue for the first); under the flood against
  // alone, that is what the flood cost it. A slot taken by a test message adds a whole slot
  // (400 ms) to one wait: under a shared budget the first push waited for every test message
  // queued ahead of it (seconds). Waits rather than arrival times, so that the flood's signature
  // checks stalling the one event loop now and then (CPU, not the send budget) do not add up.
  const alone = await batch(1, async () => {});
  // Both batches start from a pacer with no slot booked: the last push of the first has passed.
  await new Promise((r) => setTimeout(r, 2 * slotMs));
  const fromTests = bot.messages.length;
  const flooded = await batch(2, flood);
  const tests = bot.messages.slice(fromTests).filter((m) => m.chatId.startsWith('555'));
  const count = (s: number) => statuses.filter((x) => x === s).length;
  const waits = (arrivals: number[]) => arrivals.map((ms, k) => ms - (k === 0 ? 0 : arrivals[k - 1]!));
  const aloneWaits = waits(alone);
  const lateness = waits(flooded).map((ms, k) => ms - aloneWaits[k]!);
  const delayed = lateness.filter((ms) => ms >= 1.5 * slotMs).length;
  const summary = {
    requestsSent: FLOOD,
    answered200: count(200),
    answered429: count(429),
    otherStatuses: FLOOD - count(200) - count(429),
    testMessagesSent: tests.length,
    paidPushes: PAID,
    paidPushesDelayed: delayed,
    lastPaidAloneMs: alone.at(-1),
    lastPaidUnderFloodMs: flooded.at(-1),
    maxLatenessMs: Math.max(...lateness),
  };
  t.diagnostic(`flood: ${JSON.stringify(summary)}`);
  assert.ok(tests.length >= 20, 'registrations still got their test messages, on their own lane');
  assert.equal(delayed, 0, `paid pushes delayed: ${JSON.stringify(summary)}`);
  assert.ok(count(429) >= FLOOD - 40 - 5, 'the address limit refused most of the flood before any signature work');
  assert.ok(tests.filter((m) => m.chatId === '5550000').length <= 3, 'the per-chat test message budget (burst 3) held');
  const text = await (await fetch(`${base}/metrics`, admin)).text();
  assert.ok(sample(text, 'isocast_rate_limited_total{limit="test_message_chat",route="/v1/delivery/messenger"}') >= 1);
});
