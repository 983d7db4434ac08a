import assert from 'node:assert/strict';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import type { Hex } from 'viem';
import { CITY_ROWS, createCatalog } from '../../src/cities/catalog.ts';
import { localDate } from '../../src/lib/local-day.ts';
import { createBotMessenger } from '../../src/delivery/messenger.ts';
import { createOutbox } from '../../src/delivery/outbox.ts';
import { createDeliveryWorker } from '../../src/delivery/worker.ts';
import { createMetrics, type Metrics } from '../../src/lib/metrics.ts';
import { createPaymentStore } from '../../src/payments/store.ts';
import { bundlePrice } from '../../packages/isocast-client/src/pricing.ts';
import { createPoller, type Poller } from '../../src/poller/poller.ts';
import { createPolymarketSource } from '../../src/sources/market/polymarket.ts';
import { createMetarWeather } from '../../src/sources/weather/metar.ts';
import { startFakeBotApi, type FakeBotApi } from '../fakes/bot-api.ts';
import { startFakeClob } from '../fakes/clob.ts';
import { gammaEvent, startFakeGamma, tokensOf } from '../fakes/gamma.ts';
import { startFakeMetar } from '../fakes/metar.ts';
import { listen, testApp, type TestEnv } from '../helpers/app.ts';
import { registerOverHttp, emptyScreen } from '../delivery/fixtures.ts';
import { buy, over, subscribeWith, tamper, type Fetcher } from '../payments/buy.ts';
import { NYC_LABELS } from '../poller/harness.ts';

/**
 * A running isocast server with everything the operator page and /metrics show, produced through
 * the real paths: purchases signed by viem accounts and paid in mock mode over HTTP, a chat
 * registration with an EIP-712 signature, a poller ticking against local fake Gamma, CLOB and
 * METAR servers (NYC crosses two buckets, Chicago's market is in the wrong unit so it fails and
 * backs off, London has no market), and the delivery worker pushing to a fake Bot API.
 * One refund is queued through the payment store, as the plane does when applying fails.
 */
export const ADMIN_TOKEN = 'operator-token-for-tests-0123456789';
export const START = Date.parse('2026-07-15T16:00:00Z'); // noon in New York
const DAY_MS = 86_400_000;
/** A refund reason carrying markup: the page must show it as text. */
export const HOSTILE_REASON =
  'entitlement update failed: <img src=x onerror="document.body.dataset.pwned=1"><b>bold</b>';

const account = (byte: string) => privateKeyToAccount(`0x${byte.repeat(32)}` as Hex);
export const BUYERS = { a: account('a1'), b: account('b2'), c: account('c3'), d: account('d4') };

export type Seeded = {
  env: TestEnv;
  base: string;
  f: Fetcher;
  metrics: Metrics;
  bot: FakeBotApi;
  poller: Poller;
  worker: ReturnType<typeof createDeliveryWorker>;
};

export async function seededInstance(
  t: { after(fn: () => unknown): void },
  opts: { adminToken?: string | null } = {},
): Promise<Seeded> {
  const metrics = createMetrics();
  const bot = await startFakeBotApi();
  t.after(() => bot.close());
  const messenger = createBotMessenger({
    token: bot.token,
    apiUrl: bot.url,
    limits: { globalPerSecond: 200, chatIntervalMs: 20, groupIntervalMs: 20 },
  });
  let poller: Poller | null = null;
  const adminToken = opts.adminToken === undefined ? ADMIN_TOKEN : opts.adminToken;
  const env = testApp(t, {
    nowMs: START - 3 * DAY_MS,
    env: adminToken ? { ADMIN_TOKEN: adminToken } : {},
    deps: { metrics, messenger, pollerHealth: () => poller?.health() ?? { lastTick: null, cities: [] } },
  });
  const base = await listen(t, env.app.fetch);
  const f = over(base);

  // Purchases over three days, so revenue has days and cities to chart.
  const ok = async (who: PrivateKeyAccount, city: string, count: number) => {
    const r = await buy(f, who, city, count, env.clock.now());
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r;
  };
  await ok(BUYERS.a, 'nyc', 20);
  env.clock.advance(DAY_MS + 3_600_000);
  await ok(BUYERS.b, 'london', 100);
  await ok(BUYERS.a, 'paris', 2);
  env.clock.advance(DAY_MS);
  const replayed = await ok(BUYERS.c, 'nyc', 2);
  assert.equal((await subscribeWith(f, replayed.payment.xPayment, 'nyc', 2)).body.idempotent, true);
  await ok(BUYERS.b, 'nyc', 500);
  const forged = tamper(replayed.payment.xPayment, (j) => {
    j.payload.authorization.value = '1';
  });
  assert.equal((await subscribeWith(f, forged, 'nyc', 2)).status, 402);

  // A settled payment whose entitlement could not be applied: the plane's failure path.
  const store = createPaymentStore(env.db);
  const claim = store.claim({
    payer: BUYERS.d.address.toLowerCase(),
    nonce: '0x' + 'd4'.repeat(32),
    city: 'tokyo',
    count: 20,
    amountMicro: bundlePrice(20).totalMicro,
    settler: 'mock',
    nowMs: env.clock.now(),
    validBefore: Math.floor(env.clock.now() / 1000) + 300,
    bindingK: null,
  });
  assert.ok(claim.claimed);
  store.markSettled(claim.id, '0x' + 'ef'.repeat(32), env.clock.now());
  assert.ok(store.queueRefund(claim.id, HOSTILE_REASON, env.clock.now()));

  env.clock.set(START);
  assert.equal(await registerOverHttp(f, BUYERS.a, '1001', 'nyc', env.clock.now()), 200);

  const [gamma, clob, metar] = await Promise.all([
    startFakeGamma(),
    startFakeClob(),
    startFakeMetar({ now: env.clock.now }),
  ]);
  t.after(() => Promise.all([gamma.close(), clob.close(), metar.close()]));
  const date = localDate('America/New_York', START);
  const nyc = gammaEvent({ token: 'nyc', date, labels: NYC_LABELS, cityName: 'New York City' });
  gamma.put(nyc);
  NYC_LABELS.forEach((label, i) => {
    const tk = tokensOf(nyc, label);
    clob.quote(tk.yes, tk.no, Math.round((0.02 + 0.08 * Math.min(i, 10 - i)) * 1000) / 1000);
  });
  gamma.put(
    gammaEvent({
      token: 'chicago',
      date: localDate('America/Chicago', START),
      labels: ['20°C or below', '21°C', '22°C or higher'],
      cityName: 'Chicago',
    }),
  );

  const outbox = createOutbox(env.db, { clock: env.clock, screen: emptyScreen(), reader: env.stores.reader });
  const worker = createDeliveryWorker({
    outbox,
    messenger,
    clock: env.clock,
    logger: env.logger,
    termsUrl: env.config.TERMS_URL,
    metrics,
  });
  worker.start();
  t.after(() => worker.stop());
  const p = createPoller({
    stores: env.stores,
    catalog: createCatalog(CITY_ROWS.filter((c) => ['nyc', 'chicago', 'london'].includes(c.slug))),
    clock: env.clock,
    logger: env.logger,
    intervalMs: 1_000,
    metrics,
    weather: createMetarWeather({ baseUrl: metar.url, clock: env.clock, timeoutMs: 300 }),
    market: createPolymarketSource({
      gammaUrl: gamma.url,
      clobUrl: clob.url,
      clock: env.clock,
      logger: env.logger,
      gammaTimeoutMs: 300,
      clobTimeoutMs: 300,
      missingTtlMs: 60_000,
    }),
    onSignalInTransaction: outbox.enqueue,
    onSignalCommitted: () => worker.wake(),
  });
  poller = p;
  t.after(() => p.stop());

  const report = (tempC: number, minutesAgo = 1) =>
    metar.addReport('KLGA', { atMs: env.clock.now() - minutesAgo * 60_000, tempC });
  report(20.0, 30); // 68 °F: the day's baseline
  await p.tick();
  env.clock.advance(1_000);
  report(21.2); // 70 °F: into 70-71
  assert.equal((await p.tick()).signals.length, 1);
  env.clock.advance(1_000);
  report(22.3); // 72 °F: into 72-73
  assert.equal((await p.tick()).signals.length, 1);
  await bot.waitForMessages(3); // the registration's test message and two signals
  await worker.whenIdle();
  return { env, base, f, metrics, bot, poller: p, worker };
}
