import { test } from 'node:test';
import assert from 'node:assert/strict';
import { adminData } from '../../src/admin/schemas.ts';
import { testApp } from '../helpers/app.ts';
import { runScenarios, type Scenario } from '../helpers/scenarios.ts';
import { ADMIN_TOKEN, BUYERS, HOSTILE_REASON, seededInstance } from './instance.ts';

const PATHS = ['/admin', '/admin/assets/admin.js', '/admin/assets/admin.css', '/admin/data.json'];

test('without ADMIN_TOKEN every admin path is the ordinary JSON 404', async (t) => {
  const env = testApp(t);
  await runScenarios(
    t,
    env.app,
    PATHS.map((path) => ({
      name: path,
      path,
      headers: { authorization: 'Bearer anything-at-all-here' },
      expect: {
        status: 404,
        check: async (res) => {
          const body = (await res.json()) as Record<string, unknown>;
          assert.equal(body.error, 'not found');
          assert.equal(typeof body.disclaimer, 'string');
        },
      },
    })),
  );
});

test('with ADMIN_TOKEN: the page is a data-free shell; the data needs the bearer token', async (t) => {
  const env = testApp(t, { env: { ADMIN_TOKEN } });
  // Anything but a www.w3.org SVG namespace is another origin.
  const otherOrigin = { not: /https?:\/\/(?!www\.w3\.org\/2000\/svg)/ };
  const refused = (name: string, headers: Record<string, string>, path = '/admin/data.json'): Scenario => ({
    name,
    path,
    headers,
    expect: {
      status: 401,
      headers: { 'www-authenticate': 'Bearer' },
      check: async (res) => {
        const body = (await res.json()) as Record<string, unknown>;
        assert.deepEqual([body.error, typeof body.disclaimer], ['admin token required', 'string']);
      },
    },
  });
  await runScenarios(t, env.app, [
    {
      name: 'the page: a shell that loads nothing from another origin',
      path: '/admin',
      expect: {
        status: 200,
        headers: {
          'content-type': /^text\/html/,
          'content-security-policy': /default-src 'none'; script-src 'self'/,
          'cache-control': 'no-store',
          'referrer-policy': 'no-referrer',
        },
        body: [/admin\/assets\/admin\.js/, { not: /https?:\/\// }],
      },
    },
    { name: 'admin.js', path: '/admin/assets/admin.js', expect: { status: 200, body: [otherOrigin] } },
    { name: 'admin.css', path: '/admin/assets/admin.css', expect: { status: 200, body: [otherOrigin] } },
    { name: 'an unknown asset', path: '/admin/assets/other.js', expect: { status: 404 } },
    refused('no token', {}),
    refused('a wrong token', { authorization: 'Bearer wrong-token-wrong-token' }),
    refused('Basic, not Bearer', { authorization: `Basic ${ADMIN_TOKEN}` }),
    refused('no scheme', { authorization: ADMIN_TOKEN }),
    // A token in the query string is not a way in.
    refused('a token in the query', {}, `/admin/data.json?token=${ADMIN_TOKEN}`),
    {
      name: 'the data, empty',
      path: '/admin/data.json',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      expect: {
        status: 200,
        headers: { 'cache-control': 'no-store' },
        check: async (res) => {
          const data = adminData().parse(await res.json());
          assert.equal(data.totals.revenueMicro, 0);
          assert.equal(data.poller.running, false);
          assert.equal(
            data.poller.cities.length,
            env.deps.catalog.active.length,
            'without a poller every active city is listed',
          );
        },
      },
    },
  ]);
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
