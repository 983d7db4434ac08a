import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CITY_ROWS, citySelection, createCatalog } from '../../src/cities/catalog.ts';
import { createPoller } from '../../src/poller/poller.ts';
import { createPolymarketSource } from '../../src/sources/market/polymarket.ts';
import { fetchDailyTemperatureEvents } from '../../src/sources/market/gamma.ts';
import { ruleText } from '../../src/sources/market/rule-text.ts';
import { createHkoWeather, parseHkoMaxMin } from '../../src/sources/weather/hko.ts';
import { createMetarWeather } from '../../src/sources/weather/metar.ts';
import { discoveryCheck } from '../../src/resolution/store.ts';
import { gammaEvent, startFakeGamma } from '../fakes/gamma.ts';
import { startFakeClob } from '../fakes/clob.ts';
import { startFakeMetar } from '../fakes/metar.ts';
import { startFakeHko } from '../fakes/hko.ts';
import { testApp } from '../helpers/app.ts';

const HK_LABELS = ['24°C or below', ...[25, 26, 27, 28, 29, 30, 31, 32, 33].map((d) => `${d}°C`), '34°C or higher'];
// 14:00 in Hong Kong (UTC+8) on 2026-07-15; New York is still on the 15th too.
const START = Date.parse('2026-07-15T06:00:00Z');

test('HKO CSV: the Observatory row, Hong Kong time, N/A, other stations ignored', () => {
  const csv =
    '\uFEFFDate time,Automatic Weather Station,Maximum Air Temperature Since Midnight(degree Celsius),Minimum Air Temperature Since Midnight(degree Celsius)\r\n' +
    '202606021130,Chek Lap Kok,31.2,27.9\r\n202606021130,HK Observatory,30.0,27.6\r\n';
  assert.deepEqual(parseHkoMaxMin(csv), {
    atMs: Date.parse('2026-06-02T03:30:00Z'),
    localDate: '2026-06-02',
    localMinutes: 690,
    maxC: 30,
  });
  assert.equal(parseHkoMaxMin(csv.replace('30.0,27.6', 'N/A,27.6')), null);
  assert.equal(parseHkoMaxMin(csv.replace('HK Observatory', "King's Park")), null);
  assert.throws(() => parseHkoMaxMin('time,temp\n1,2'), /no Date time/);
});

test('Hong Kong served by name: discovered, observed from the Observatory, floored, its own seq from 1, listed by /v1/cities', async (t) => {
  const catalog = createCatalog(CITY_ROWS, citySelection('nyc,hong-kong'));
  const env = testApp(t, { nowMs: START, deps: { catalog } });
  const [gamma, clob, metar, hko] = await Promise.all([
    startFakeGamma(),
    startFakeClob(),
    startFakeMetar({ now: env.clock.now }),
    startFakeHko(),
  ]);
  t.after(() => Promise.all([gamma.close(), clob.close(), metar.close(), hko.close()]).then(() => undefined));
  const hongKong = CITY_ROWS.find((c) => c.slug === 'hong-kong')!;
  gamma.put(
    gammaEvent({
      token: 'hong-kong',
      date: '2026-07-15',
      labels: HK_LABELS,
      cityName: 'Hong Kong',
      rule: ruleText(hongKong, '2026-07-15', { kind: 'hko' }),
    }),
  );
  const before = (await (await env.app.request(`/v1/cities`)).json()) as { cities: { slug: string }[] };
  assert.deepEqual(
    before.cities.map((c) => c.slug),
    ['nyc'],
  );

  const poller = createPoller({
    stores: env.stores,
    catalog,
    clock: env.clock,
    logger: env.logger,
    intervalMs: 1_000,
    weather: createMetarWeather({ baseUrl: metar.url, clock: env.clock, timeoutMs: 1_500 }),
    hkoWeather: createHkoWeather({ baseUrl: hko.url, timeoutMs: 1_500 }),
    discovery: { list: () => fetchDailyTemperatureEvents({ baseUrl: gamma.url, timeoutMs: 1_500 }) },
    market: createPolymarketSource({
      gammaUrl: gamma.url,
      clobUrl: clob.url,
      clock: env.clock,
      logger: env.logger,
      gammaTimeoutMs: 1_500,
      clobTimeoutMs: 1_500,
    }),
  });
  t.after(() => poller.stop());

  // 28.9 °C since midnight: the rule floors it, 28 °C (half-up would say 29).
  hko.setObservatory(START - 5 * 60_000, 28.9, 26.1);
  const first = await poller.tick();
  assert.ok(catalog.get('hong-kong'), 'discovery served Hong Kong');
  assert.deepEqual(first.errors, []);
  assert.equal(first.baselines, 1);
  const state = env.db.prepare("SELECT high FROM day_state WHERE city = 'hong-kong'").pluck().get();
  assert.equal(state, 28);
  const after = (await (await env.app.request(`/v1/cities`)).json()) as { cities: { slug: string }[] };
  assert.deepEqual(after.cities.map((c) => c.slug).sort(), ['hong-kong', 'nyc']);

  // 29.0 °C: a new bucket, the first signal of a newly served city is seq 1.
  env.clock.advance(10 * 60_000);
  hko.setObservatory(env.clock.now() - 60_000, 29.0, 26.1);
  const second = await poller.tick();
  assert.equal(second.signals.length, 1);
  const s = second.signals[0]!;
  assert.deepEqual([s.city, s.seq, s.old.bucket, s.new.bucket, s.source], ['hong-kong', 1, '28°C', '29°C', 'hko']);
  assert.equal(discoveryCheck(env.db).status, 'ok');
  assert.ok(hko.requests.length >= 2);
});
