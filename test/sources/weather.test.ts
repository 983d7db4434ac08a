import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createCatalog } from '../../src/cities/catalog.ts';
import { manualClock } from '../helpers/clock.ts';
import { UpstreamError } from '../../src/lib/errors.ts';
import { dailyHighReading } from '../../src/buckets/daily-high.ts';
import { createWuWeather, parseWu } from '../../src/sources/weather/wu.ts';
import { createMetarWeather, parseMetar } from '../../src/sources/weather/metar.ts';
import { startFakeWeatherCom } from '../fakes/weather-com.ts';
import { startFakeMetar } from '../fakes/metar.ts';

const catalog = createCatalog();
const nyc = catalog.get('nyc')!;
const tokyo = catalog.get('tokyo')!;
const seoul = catalog.get('seoul')!;

test('weather.com: one request per station in its unit for its local day; max_temp is ignored', async (t) => {
  const wu = await startFakeWeatherCom();
  t.after(() => wu.close());
  const at = (iso: string) => Date.parse(iso);
  // NYC, 2026-07-15 local = 04:00Z on the 15th .. 04:00Z on the 16th.
  wu.setObservations('KLGA:9:US', 'America/New_York', [
    { atMs: at('2026-07-15T03:51:00Z'), tempC: 30 }, // previous local day
    { atMs: at('2026-07-15T14:51:00Z'), tempC: 25.0 }, // 77 °F
    { atMs: at('2026-07-15T19:51:00Z'), tempC: 27.2 }, // 80.96 -> 81 °F
  ]);
  wu.setObservations('RJTT:9:JP', 'Asia/Tokyo', [{ atMs: at('2026-07-15T05:00:00Z'), tempC: 31.4 }]);
  const source = createWuWeather({ baseUrl: wu.url, apiKey: wu.apiKey });
  const out = await source.observe([
    { city: nyc, date: '2026-07-15' },
    { city: tokyo, date: '2026-07-15' },
  ]);
  const nycObs = out.get('nyc');
  assert.ok(Array.isArray(nycObs));
  assert.deepEqual(
    nycObs.map((o) => [o.temp, o.unit]),
    [
      [77, 'F'],
      [81, 'F'],
    ],
  );
  assert.equal(dailyHighReading(nycObs, { timezone: nyc.timezone, date: '2026-07-15', unit: 'F' }), 81);
  assert.deepEqual(
    (out.get('tokyo') as { temp: number }[]).map((o) => o.temp),
    [31],
  );
  const q = wu.requests.find((r) => r.path.includes('KLGA'))!.query;
  assert.deepEqual([q.get('units'), q.get('startDate'), q.get('endDate')], ['e', '20260715', '20260715']);
  assert.equal(wu.requests.find((r) => r.path.includes('RJTT'))!.query.get('units'), 'm');
});

test('weather.com failures stay per city: a bad key, a 500, garbage', async (t) => {
  const wu = await startFakeWeatherCom();
  t.after(() => wu.close());
  wu.setObservations('KLGA:9:US', 'America/New_York', []);
  const bad = createWuWeather({ baseUrl: wu.url, apiKey: 'wrong' });
  const r1 = (await bad.observe([{ city: nyc, date: '2026-07-15' }])).get('nyc');
  assert.ok(r1 instanceof UpstreamError && r1.httpStatus === 401);
  assert.ok(!r1.message.includes('wrong'), 'the key is not in the error');
  const good = createWuWeather({ baseUrl: wu.url, apiKey: wu.apiKey, timeoutMs: 300 });
  wu.fault({ kind: 'status', status: 500, times: 1 });
  assert.ok((await good.observe([{ city: nyc, date: '2026-07-15' }])).get('nyc') instanceof UpstreamError);
  wu.fault({ kind: 'wrong-shape', times: 1 });
  assert.ok((await good.observe([{ city: nyc, date: '2026-07-15' }])).get('nyc') instanceof UpstreamError);
  assert.throws(() => parseWu({ observations: [{ valid_time_gmt: 'x', temp: 1 }] }, 'F'), UpstreamError);
  assert.deepEqual(parseWu({ observations: [{ valid_time_gmt: 1779339060, temp: null, max_temp: 96 }] }, 'F'), []);
});

test('METAR: T-group tenths, signs, and rows without temperatures', () => {
  const tempOf = (temp: number, rawOb: string) =>
    parseMetar([{ icaoId: 'KXXX', obsTime: 1789429860, temp, rawOb }]).get('KXXX')![0]!.temp;
  assert.equal(
    tempOf(22, 'METAR KLGA 142351Z 35013G19KT 10SM FEW060 22/08 A3015 RMK AO2 SLP209 T02170078 10239 20217 51022'),
    21.7,
  );
  assert.equal(tempOf(-2, 'METAR KORD 010051Z 27010KT M02/M05 A3001 RMK AO2 T10231045'), -2.3);
  assert.equal(tempOf(21, 'METAR RKSI 100100Z 23004KT 160V310 8000 BKN015 21/17 Q1009 NOSIG'), 21, 'no T-group');
  const rows = parseMetar([
    { icaoId: 'KLGA', obsTime: 1789429860, temp: 22, rawOb: 'METAR KLGA 142351Z 22/08 A3015 RMK AO2 T02170078' },
    { icaoId: 'RKSI', obsTime: 1781053200, temp: 21, rawOb: 'METAR RKSI 100100Z 21/17 Q1009 NOSIG' },
    { icaoId: 'RKSI', obsTime: 1781056800, temp: null },
  ]);
  assert.deepEqual(rows.get('KLGA'), [
    {
      atMs: 1789429860000,
      temp: 21.7,
      unit: 'C',
      report: 'routine',
      raw: 'METAR KLGA 142351Z 22/08 A3015 RMK AO2 T02170078',
      precision: 0.1,
    },
  ]);
  assert.deepEqual(rows.get('RKSI'), [
    {
      atMs: 1781053200000,
      temp: 21,
      unit: 'C',
      report: 'routine',
      raw: 'METAR RKSI 100100Z 21/17 Q1009 NOSIG',
      precision: 1,
    },
  ]);
  assert.throws(() => parseMetar({ not: 'an array' }), UpstreamError);
  assert.throws(() => parseMetar([{ icaoId: 'KLGA', obsTime: 'soon' }]), UpstreamError);
});

test('METAR provenance: the T group value and its tenths, receiptTime, the raw report cleaned', () => {
  const rows = parseMetar([
    {
      icaoId: 'KJFK',
      obsTime: 1789429860,
      receiptTime: '2026-09-14T23:54:08.569Z',
      temp: 23,
      metarType: 'METAR',
      rawOb: 'METAR KJFK 142351Z 23/12 A3015 RMK AO2 T02330117\u0007\n',
    },
    // An unreadable receiptTime is left out, never guessed.
    { icaoId: 'EGLL', obsTime: 1789429800, receiptTime: 'soon', temp: 18, rawOb: 'METAR EGLL 142350Z 18/11 Q1012' },
    { icaoId: 'KORD', obsTime: 1789429860, temp: 20.6 },
    // A receipt stamped far from the report is a broken row: left out, never a stopped signal.
    { icaoId: 'KBOS', obsTime: 1789429860, receiptTime: '+275760-09-13T00:00:00.000Z', temp: 19 },
    { icaoId: 'KBOS', obsTime: 1789429920, receiptTime: '2026-09-14T21:00:00.000Z', temp: 19 },
  ]);
  assert.deepEqual(
    rows.get('KBOS')?.map((o) => o.availableAtMs),
    [undefined, undefined],
  );
  assert.deepEqual(rows.get('KJFK'), [
    {
      atMs: 1789429860000,
      temp: 23.3,
      unit: 'C',
      report: 'routine',
      raw: 'METAR KJFK 142351Z 23/12 A3015 RMK AO2 T02330117',
      precision: 0.1,
      availableAtMs: Date.parse('2026-09-14T23:54:08.569Z'),
    },
  ]);
  assert.deepEqual(rows.get('EGLL')?.[0]?.precision, 1);
  assert.equal(rows.get('EGLL')?.[0]?.availableAtMs, undefined);
  // tenths in `temp` without a raw report are still tenths.
  assert.deepEqual(rows.get('KORD'), [{ atMs: 1789429860000, temp: 20.6, unit: 'C', precision: 0.1 }]);
  assert.equal(
    parseMetar([{ icaoId: 'KJFK', obsTime: 1, temp: 1, rawOb: 'x'.repeat(2000) }]).get('KJFK')?.[0]?.raw?.length,
    512,
  );
});

test('METAR: one request for many stations, hours reach back to the earliest local midnight, 204 is no data', async (t) => {
  const now = Date.parse('2026-07-15T18:00:00Z');
  const clock = manualClock(now);
  const metar = await startFakeMetar({ now: clock.now });
  t.after(() => metar.close());
  metar.setReports('KLGA', [
    { atMs: Date.parse('2026-07-15T14:51:00Z'), tempC: 25.6 },
    { atMs: Date.parse('2026-07-15T16:51:00Z'), tempC: 26.7 },
  ]);
  metar.setReports('RJTT', [{ atMs: Date.parse('2026-07-15T05:00:00Z'), tempC: 31 }]);
  const source = createMetarWeather({ baseUrl: metar.url, clock });
  const out = await source.observe([
    { city: nyc, date: '2026-07-15' },
    { city: tokyo, date: '2026-07-15' },
    { city: seoul, date: '2026-07-15' },
  ]);
  assert.equal(metar.requests.length, 1);
  const q = metar.requests[0]!.query;
  assert.deepEqual(q.get('ids')!.split(',').sort(), ['KLGA', 'RJTT', 'RKSI']);
  // Tokyo's 2026-07-15 began at 15:00Z on the 14th: 27 hours before now, plus one.
  assert.equal(q.get('hours'), '28');
  assert.equal(
    dailyHighReading(out.get('nyc') as never, { timezone: nyc.timezone, date: '2026-07-15', unit: 'F' }),
    80,
  ); // 26.7 °C = 80.06 °F
  assert.deepEqual(out.get('seoul'), []);
  metar.setReports('KLGA', []);
  metar.setReports('RJTT', []);
  const empty = await source.observe([{ city: nyc, date: '2026-07-15' }]);
  assert.deepEqual(empty.get('nyc'), []);
  metar.fault({ kind: 'not-json', times: 1 });
  assert.ok((await source.observe([{ city: nyc, date: '2026-07-15' }])).get('nyc') instanceof UpstreamError);
});
