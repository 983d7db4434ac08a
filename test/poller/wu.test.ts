import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createWuWeather } from '../../src/sources/weather/wu.ts';
import { startFakeWeatherCom } from '../fakes/weather-com.ts';
import { harness, UPSTREAM_TIMEOUT_MS } from './harness.ts';

test('weather.com feed: two bucket entries give two signals with source wu; the API key never reaches the logs', async (t) => {
  const wu = await startFakeWeatherCom({ apiKey: 'wu-secret-key-do-not-log-1234' });
  t.after(() => wu.close());
  const h = await harness(t, {
    weather: () => createWuWeather({ baseUrl: wu.url, apiKey: wu.apiKey, timeoutMs: UPSTREAM_TIMEOUT_MS }),
  });
  const add = (tempC: number) =>
    wu.addObservation('KLGA:9:US', 'America/New_York', { atMs: h.env.clock.now() - 60_000, tempC });
  add(20); // 68 °F
  assert.equal((await h.poller.tick()).baselines, 1);
  h.env.clock.advance(1_000);
  add(21.2); // 70 °F
  h.env.clock.advance(1_000);
  const a = await h.poller.tick();
  h.env.clock.advance(1_000);
  add(23.4); // 74 °F: jumps over 72-73 in one reading
  const b = await h.poller.tick();
  const signals = [...a.signals, ...b.signals];
  assert.deepEqual(
    signals.map((s) => [s.seq, s.source, s.old.bucket, s.new.bucket]),
    [
      [1, 'wu', '68-69°F', '70-71°F'],
      [2, 'wu', '70-71°F', '74-75°F'],
    ],
  );
  // The provider's max_temp (set 25 °C too warm by the fake) was not used.
  assert.equal(signals[1]!.new.reading, 74);

  wu.fault({ kind: 'status', status: 500 });
  h.env.clock.advance(60_000);
  assert.equal((await h.poller.tick()).errors.length, 1);
  wu.fault(null);
  assert.ok(h.env.logger.lines.length > 0);
  assert.ok(h.env.logger.lines.every((l) => !l.includes(wu.apiKey)));
});

test('weather.com location ids go into the path with literal colons; the fake refuses the encoded form', async (t) => {
  const { CITY_ROWS } = await import('../../src/cities/catalog.ts');
  const wu = await startFakeWeatherCom();
  t.after(() => wu.close());
  wu.addObservation('KLGA:9:US', 'America/New_York', { atMs: Date.parse('2026-07-15T16:00:00Z'), tempC: 20 });
  const q = `apiKey=${wu.apiKey}&units=e&startDate=20260715&endDate=20260715`;
  assert.equal((await fetch(`${wu.url}/v1/location/KLGA:9:US/observations/historical.json?${q}`)).status, 200);
  assert.equal((await fetch(`${wu.url}/v1/location/KLGA%3A9%3AUS/observations/historical.json?${q}`)).status, 404);
  const source = createWuWeather({ baseUrl: wu.url, apiKey: wu.apiKey, timeoutMs: UPSTREAM_TIMEOUT_MS });
  const got = await source.observe([{ city: CITY_ROWS.find((c) => c.slug === 'nyc')!, date: '2026-07-15' }]);
  assert.deepEqual(got.get('nyc'), [{ atMs: Date.parse('2026-07-15T16:00:00Z'), temp: 68, unit: 'F', precision: 1 }]);
  assert.equal(wu.requests.at(-1)!.path, '/v1/location/KLGA:9:US/observations/historical.json');
});
