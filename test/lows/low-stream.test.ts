import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CITY_ROWS, createCatalog, lowStreamOf } from '../../src/cities/catalog.ts';
import { localDate } from '../../src/lib/local-day.ts';
import { createPoller } from '../../src/poller/poller.ts';
import { createPolymarketSource } from '../../src/sources/market/polymarket.ts';
import { createMetarWeather } from '../../src/sources/weather/metar.ts';
import { gammaEvent, startFakeGamma, tokensOf } from '../fakes/gamma.ts';
import { startFakeClob } from '../fakes/clob.ts';
import { startFakeMetar } from '../fakes/metar.ts';
import { testApp } from '../helpers/app.ts';

/**
 * A city's high and low streams side by side, end to end: fake Gamma serving both events in the
 * live shape, a fake CLOB, fake METAR reports for KLGA, a real SQLite file and the real server.
 * Night (the low falls, then holds) and afternoon (the high rises) give each stream its own
 * signals, seq from 1, and dead buckets on its own side.
 */
const LOW_LABELS = [
  '55°F or below',
  '56-57°F',
  '58-59°F',
  '60-61°F',
  '62-63°F',
  '64-65°F',
  '66-67°F',
  '68-69°F',
  '70-71°F',
  '72-73°F',
  '74°F or higher',
];
const HIGH_LABELS = [
  '71°F or below',
  '72-73°F',
  '74-75°F',
  '76-77°F',
  '78-79°F',
  '80-81°F',
  '82-83°F',
  '84-85°F',
  '86-87°F',
  '88-89°F',
  '90°F or higher',
];
const MIDNIGHT_NY = Date.parse('2026-06-04T04:00:00Z');

test('nyc-low signals each colder bucket once, seq from 1, beside nyc; both listed with their kind', async (t) => {
  const nyc = CITY_ROWS.find((c) => c.slug === 'nyc')!;
  const catalog = createCatalog([nyc, lowStreamOf(nyc)]);
  const env = testApp(t, { nowMs: MIDNIGHT_NY + 30 * 60_000, deps: { catalog } });
  const [gamma, clob, metar] = await Promise.all([
    startFakeGamma(),
    startFakeClob(),
    startFakeMetar({ now: env.clock.now }),
  ]);
  t.after(() => Promise.all([gamma.close(), clob.close(), metar.close()]).then(() => undefined));
  const date = localDate('America/New_York', env.clock.now());
  assert.equal(date, '2026-06-04');
  for (const [kind, labels] of [
    ['low', LOW_LABELS],
    ['high', HIGH_LABELS],
  ] as const) {
    const ev = gammaEvent({ token: 'nyc', date, labels, cityName: 'NYC', kind });
    gamma.put(ev);
    for (const label of labels) clob.quote(tokensOf(ev, label).yes, tokensOf(ev, label).no, 0.3);
  }
  const poller = createPoller({
    stores: env.stores,
    catalog,
    clock: env.clock,
    logger: env.logger,
    intervalMs: 1_000,
    weather: createMetarWeather({ baseUrl: metar.url, clock: env.clock, timeoutMs: 1_500 }),
    market: createPolymarketSource({ gammaUrl: gamma.url, clobUrl: clob.url, clock: env.clock, logger: env.logger }),
  });
  t.after(() => poller.stop());

  const at = (hh: number, mm: number) => MIDNIGHT_NY + (hh * 60 + mm) * 60_000;
  const step = async (hh: number, mm: number, tempC: number) => {
    env.clock.set(at(hh, mm) + 60_000);
    metar.addReport('KLGA', { atMs: at(hh, mm), tempC });
    return poller.tick();
  };
  // Night: 20.0 °C = 68 °F baseline, then 19.4 (66.9 -> 67), 18.9 (66.0 -> 66: same bucket),
  // 16.7 (62.06 -> 62), then a warmer dawn that must not move the low.
  const r0 = await step(0, 51, 20.0);
  assert.equal(r0.baselines, 2, 'the first reading is the baseline of both streams');
  assert.deepEqual(
    (await step(1, 51, 19.4)).signals.map((s) => [s.city, s.new.bucket]),
    [['nyc-low', '66-67°F']],
  );
  assert.equal((await step(2, 51, 18.9)).signals.length, 0);
  const s3 = (await step(3, 51, 16.7)).signals;
  assert.deepEqual(
    s3.map((s) => [s.city, s.seq, s.old.bucket, s.new.bucket]),
    [['nyc-low', 2, '66-67°F', '62-63°F']],
  );
  const dead = s3[0]!.buckets!.filter((b) => b.dead).map((b) => b.label);
  assert.deepEqual(dead, ['64-65°F', '66-67°F', '68-69°F', '70-71°F', '72-73°F', '74°F or higher']);
  assert.equal((await step(6, 51, 18.0)).signals.length, 0, 'a warmer reading never moves a low');
  // Afternoon: the high stream crosses warmer; the low holds.
  const pm = (await step(14, 51, 26.1)).signals; // 78.98 -> 79
  assert.deepEqual(
    pm.map((s) => [s.city, s.seq, s.new.bucket]),
    [['nyc', 1, '78-79°F']],
  );

  const list = (await (await env.app.request(`/v1/cities?kind=all`)).json()) as {
    cities: { slug: string; kind: string; latestSeq: number }[];
  };
  assert.deepEqual(
    list.cities.map((c) => [c.slug, c.kind, c.latestSeq]),
    [
      ['nyc', 'high', 1],
      ['nyc-low', 'low', 2],
    ],
  );
  const lows = (await (await env.app.request(`/v1/cities?kind=low`)).json()) as {
    cities: { slug: string }[];
    count: number;
  };
  assert.deepEqual([lows.count, lows.cities.map((c) => c.slug)], [1, ['nyc-low']]);
  const detail = (await (await env.app.request(`/v1/cities/nyc-low`)).json()) as {
    marketUrl: string;
    city: { kind: string };
  };
  assert.equal(detail.city.kind, 'low');
  assert.match(detail.marketUrl, /lowest-temperature-in-nyc-on-june-4-2026$/);
  const sample = (await (await env.app.request(`/v1/sample?city=nyc-low`)).json()) as {
    signal?: { seq: number; city: string };
    seq?: number;
    city?: string;
  };
  const first = sample.signal ?? sample;
  assert.deepEqual([first.city, first.seq], ['nyc-low', 1]);
});

test('a low stream whose event carries a high rule is paused, not signalled', async (t) => {
  const nyc = CITY_ROWS.find((c) => c.slug === 'nyc')!;
  const catalog = createCatalog([lowStreamOf(nyc)]);
  const env = testApp(t, { nowMs: MIDNIGHT_NY + 30 * 60_000, deps: { catalog } });
  const [gamma, clob, metar] = await Promise.all([
    startFakeGamma(),
    startFakeClob(),
    startFakeMetar({ now: env.clock.now }),
  ]);
  t.after(() => Promise.all([gamma.close(), clob.close(), metar.close()]).then(() => undefined));
  const date = localDate('America/New_York', env.clock.now());
  // The low slug, but the text of a daily-high rule.
  const wrong = gammaEvent({
    token: 'nyc',
    date,
    labels: LOW_LABELS,
    kind: 'low',
    rule: { kind: 'wu', extreme: 'high' },
  });
  gamma.put(wrong);
  const poller = createPoller({
    stores: env.stores,
    catalog,
    clock: env.clock,
    logger: env.logger,
    intervalMs: 1_000,
    weather: createMetarWeather({ baseUrl: metar.url, clock: env.clock, timeoutMs: 1_500 }),
    market: createPolymarketSource({ gammaUrl: gamma.url, clobUrl: clob.url, clock: env.clock, logger: env.logger }),
  });
  t.after(() => poller.stop());
  metar.addReport('KLGA', { atMs: env.clock.now() - 60_000, tempC: 20 });
  const r = await poller.tick();
  assert.deepEqual(r.paused, ['nyc-low']);
  assert.match(
    poller.ruleFor(catalog.get('nyc-low')!)?.reason ?? '',
    /highest temperature, this stream watches the daily low/,
  );
});

test('a low event whose rule names another station pauses the low stream, as for a high', async (t) => {
  const nyc = CITY_ROWS.find((c) => c.slug === 'nyc')!;
  const catalog = createCatalog([nyc, lowStreamOf(nyc)]);
  const env = testApp(t, { nowMs: MIDNIGHT_NY + 30 * 60_000, deps: { catalog } });
  const [gamma, clob, metar] = await Promise.all([
    startFakeGamma(),
    startFakeClob(),
    startFakeMetar({ now: env.clock.now }),
  ]);
  t.after(() => Promise.all([gamma.close(), clob.close(), metar.close()]).then(() => undefined));
  const date = localDate('America/New_York', env.clock.now());
  gamma.put(gammaEvent({ token: 'nyc', date, labels: HIGH_LABELS, cityName: 'NYC' }));
  // The low market resolves at JFK, not at the catalog's LaGuardia.
  gamma.put(
    gammaEvent({
      token: 'nyc',
      date,
      labels: LOW_LABELS,
      cityName: 'NYC',
      kind: 'low',
      rule: { kind: 'wu', station: 'KJFK' },
    }),
  );
  const poller = createPoller({
    stores: env.stores,
    catalog,
    clock: env.clock,
    logger: env.logger,
    intervalMs: 1_000,
    weather: createMetarWeather({ baseUrl: metar.url, clock: env.clock, timeoutMs: 1_500 }),
    market: createPolymarketSource({ gammaUrl: gamma.url, clobUrl: clob.url, clock: env.clock, logger: env.logger }),
  });
  t.after(() => poller.stop());
  metar.addReport('KLGA', { atMs: env.clock.now() - 60_000, tempC: 20 });
  const r = await poller.tick();
  assert.deepEqual(r.paused, ['nyc-low']);
  assert.equal(r.baselines, 1, 'the high stream, on its own matching rule, takes its baseline');
  assert.equal(poller.ruleFor(catalog.get('nyc-low')!)?.reason, 'rule names station KJFK, the catalog watches KLGA');
});
