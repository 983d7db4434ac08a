import { test } from 'node:test';
import assert from 'node:assert/strict';
import { adminData } from '../../src/admin/schemas.ts';
import { listen, testApp } from '../helpers/app.ts';
import { ADMIN_TOKEN, BUYERS, HOSTILE_REASON, seededInstance } from './instance.ts';

const PATHS = ['/admin', '/admin/assets/admin.js', '/admin/assets/admin.css', '/admin/data.json'];

test('without ADMIN_TOKEN every admin path is the ordinary JSON 404', async (t) => {
  const env = testApp(t);
  const base = await listen(t, env.app.fetch);
  for (const path of PATHS) {
    const res = await fetch(`${base}${path}`, { headers: { authorization: 'Bearer anything-at-all-here' } });
    assert.equal(res.status, 404, path);
    const body = (await res.json()) as Record<string, unknown>;
    assert.equal(body.error, 'not found');
    assert.equal(typeof body.disclaimer, 'string');
  }
});

test('with ADMIN_TOKEN: the page is a data-free shell; the data needs the bearer token', async (t) => {
  const env = testApp(t, { env: { ADMIN_TOKEN } });
  const base = await listen(t, env.app.fetch);

  const page = await fetch(`${base}/admin`);
  assert.equal(page.status, 200);
  assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
  assert.match(page.headers.get('content-security-policy') ?? '', /default-src 'none'; script-src 'self'/);
  assert.equal(page.headers.get('cache-control'), 'no-store');
  assert.equal(page.headers.get('referrer-policy'), 'no-referrer');
  const html = await page.text();
  assert.match(html, /admin\/assets\/admin\.js/);
  assert.doesNotMatch(html, /https?:\/\//, 'the page loads nothing from another origin');
  for (const file of ['admin.js', 'admin.css']) {
    const res = await fetch(`${base}/admin/assets/${file}`);
    assert.equal(res.status, 200);
    assert.doesNotMatch(
      await res.text(),
      /https?:\/\/(?!www\.w3\.org\/2000\/svg)/,
      `${file} references no other origin`,
    );
  }
  assert.equal((await fetch(`${base}/admin/assets/other.js`)).status, 404);

  for (const authorization of [undefined, 'Bearer wrong-token-wrong-token', `Basic ${ADMIN_TOKEN}`, ADMIN_TOKEN]) {
    const res = await fetch(`${base}/admin/data.json`, { headers: authorization ? { authorization } : {} });
    assert.equal(res.status, 401, String(authorization));
    assert.equal(res.headers.get('www-authenticate'), 'Bearer');
    const body = (await res.json()) as Record<string, unknown>;
    assert.deepEqual([body.error, typeof body.disclaimer], ['admin token required', 'string']);
  }
  // A token in the query string is not a way in.
  assert.equal((await fetch(`${base}/admin/data.json?token=${ADMIN_TOKEN}`)).status, 401);

  const empty = await fetch(`${base}/admin/data.json`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  assert.equal(empty.status, 200);
  assert.equal(empty.headers.get('cache-control'), 'no-store');
  const data = adminData().parse(await empty.json());
  assert.equal(data.totals.revenueMicro, 0);
  assert.equal(data.poller.running, false);
  assert.equal(
    data.poller.cities.length,
    env.deps.catalog.active.length,
    'without a poller every active city is listed',
  );
});

test('the data document reports revenue, payments, refunds, entitlements, deliveries and poller health', async (t) => {
  const s = await seededInstance(t);
  const res = await s.f('/admin/data.json', { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  assert.equal(res.status, 200);
  const data = adminData().parse(await res.json());

  // 20 + 2 nyc (0.10 + 0.01), 100 london (0.45), 2 paris (0.01), 500 nyc (2.00); the refunded one is not revenue.
  assert.deepEqual(data.totals, {
    revenueMicro: 2_570_000,
    revenueUsd: 2.57,
    appliedPayments: 5,
    refundsQueued: 1,
    refundsQueuedMicro: 100_000,
    inDoubtPayments: 0,
    oldestInDoubtSeconds: null,
    signals: 2,
    entitlements: 5,
  });
  assert.deepEqual(
    data.revenueByDay.map((r) => [r.day, r.city, r.payments, r.micro]),
    [
      ['2026-07-12', 'nyc', 1, 100_000],
      ['2026-07-13', 'london', 1, 450_000],
      ['2026-07-13', 'paris', 1, 10_000],
      ['2026-07-14', 'nyc', 2, 2_010_000],
    ],
  );
  assert.equal(data.revenueByDay.find((r) => r.city === 'london')!.usd, 0.45);

  // Newest first; the forged payment never reached the table (refused before any claim).
  assert.deepEqual(
    data.recentPayments.map((p) => [p.city, p.count, p.status]),
    [
      ['tokyo', 20, 'refund_queued'],
      ['nyc', 500, 'applied'],
      ['nyc', 2, 'applied'],
      ['paris', 2, 'applied'],
      ['london', 100, 'applied'],
      ['nyc', 20, 'applied'],
    ],
  );
  assert.ok(data.recentPayments.every((p) => p.txHash === null || /^0x[0-9a-f]{64}$/.test(p.txHash)));
  assert.equal(data.recentPayments[1]!.wallet, BUYERS.b.address.toLowerCase());

  assert.equal(data.refunds.length, 1);
  assert.deepEqual(
    [data.refunds[0]!.amountUsd, data.refunds[0]!.reason, data.refunds[0]!.status],
    [0.1, HOSTILE_REASON, 'queued'],
  );

  const ent = data.entitlements.find((e) => e.wallet === BUYERS.b.address.toLowerCase() && e.city === 'nyc')!;
  assert.deepEqual([ent.paidThroughSeq, ent.totalPaidSignals, ent.latestSeq], [500, 500, 2]);

  assert.deepEqual(data.deliveries.counts, { queued: 0, sending: 0, sent: 2, failed: 0 });
  assert.deepEqual(data.deliveries.recent.map((d) => [d.wallet, d.seq, d.bucket, d.status]).sort(), [
    [BUYERS.a.address.toLowerCase(), 1, '70-71°F', 'sent'],
    [BUYERS.a.address.toLowerCase(), 2, '72-73°F', 'sent'],
  ]);

  assert.equal(data.poller.running, true);
  assert.deepEqual(data.poller.lastTick && [data.poller.lastTick.signals, data.poller.lastTick.errors], [1, 0]);
  const city = (slug: string) => data.poller.cities.find((c) => c.city === slug)!;
  assert.deepEqual(data.poller.cities.map((c) => c.city).sort(), ['chicago', 'london', 'nyc']);
  assert.deepEqual(city('nyc').lastReading && [city('nyc').lastReading!.high, city('nyc').lastReading!.bucket], [
    72,
    '72-73°F',
  ]);
  assert.deepEqual([city('nyc').latestSeq, city('nyc').failures, city('nyc').lastError], [2, 0, null]);
  assert.ok(city('nyc').lastOkAt);
  assert.equal(city('chicago').failures, 2);
  assert.match(city('chicago').lastError ?? '', /^polymarket: market buckets are not in °F/);
  assert.ok(Date.parse(city('chicago').retryAt!) > Date.parse(data.generatedAt), 'chicago is backing off');
  assert.equal(city('london').noMarket, true);
});
