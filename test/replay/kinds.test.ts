import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CITY_ROWS } from '../../src/cities/catalog.ts';
import { ruleText } from '../../src/sources/market/rule-text.ts';
import { gammaEvent, type GammaEventJson } from '../fakes/gamma.ts';
import { csv, replay } from './helpers.ts';

/**
 * `isocast replay` applies the day's rule kind (src/buckets/daily-high.ts) as the poller does: the
 * Hong Kong Observatory's 0.1 °C maximum is rounded down, and a US NOAA rule's hourly view leaves a
 * SPECI out. These days are constructed around the rules (the resolved bucket is set to what the
 * rule gives); no whole real day with its resolved market was found for them (docs/resolution-rules.md).
 */
function resolvedAt(ev: GammaEventJson, label: string): string {
  for (const m of ev.markets) m.outcomePrices = m.groupItemTitle === label ? '["1", "0"]' : '["0", "1"]';
  return JSON.stringify([{ ...ev, closed: true }]);
}

test('a Hong Kong day resolves on the floor of the 0.1 °C maximum (28.9 °C pays 28 °C)', async () => {
  const hk = CITY_ROWS.find((c) => c.slug === 'hong-kong')!;
  const labels = ['24°C or below', ...[25, 26, 27, 28, 29, 30, 31, 32, 33].map((d) => `${d}°C`), '34°C or higher'];
  const ev = gammaEvent({
    token: 'hong-kong',
    date: '2026-06-02',
    labels,
    cityName: 'Hong Kong',
    rule: ruleText(hk, '2026-06-02', { kind: 'hko' }),
  });
  const r = await replay(
    ['--city', 'hong-kong', '--date', '2026-06-02', '--observations', 'day', '--market', 'ev', '--json'],
    {
      files: {
        // The Observatory's running maximum through the day (Hong Kong time = UTC+8).
        day: csv([
          ['2026-06-02T01:30:00Z', 27.6, 'C'],
          ['2026-06-02T03:30:00Z', 28.4, 'C'],
          ['2026-06-02T06:10:00Z', 28.9, 'C'],
          ['2026-06-02T09:00:00Z', 28.9, 'C'],
        ]),
        ev: resolvedAt(ev, '28°C'),
      },
    },
  );
  assert.equal(r.code, 0, r.stderr);
  const j = r.json!;
  assert.equal(j.kind, 'hko');
  assert.deepEqual([j.final?.reading, j.final?.bucket, j.market.resolvedBucket, j.match], [28, '28°C', '28°C', true]);
  assert.deepEqual(j.rule?.source, 'hko');
});

test('a US NOAA day (Show Hourly Data) leaves out the SPECI that carried the maximum', async () => {
  const nyc = CITY_ROWS.find((c) => c.slug === 'nyc')!;
  const labels = ['65°F or below', '66-67°F', '68-69°F', '70-71°F', '72-73°F', '74-75°F', '76°F or higher'];
  const ev = gammaEvent({
    token: 'nyc',
    date: '2026-09-14',
    labels,
    cityName: 'New York City',
    rule: ruleText(nyc, '2026-09-14', { kind: 'noaa' }),
  });
  const row = (iso: string, rawOb: string, metarType: string) => ({
    icaoId: 'KLGA',
    obsTime: Date.parse(iso) / 1000,
    temp: null,
    metarType,
    rawOb,
  });
  const metar = JSON.stringify([
    row('2026-09-14T17:51:00Z', 'METAR KLGA 141751Z 35012KT 10SM FEW060 22/08 A3016 RMK AO2 SLP212 T02220078', 'METAR'),
    // 23.3 °C = 73.94 °F -> 74 °F: only in a SPECI.
    row('2026-09-14T18:23:00Z', 'SPECI KLGA 141823Z 35014G21KT 10SM FEW060 23/08 A3015 RMK AO2 T02330078', 'SPECI'),
    row(
      '2026-09-14T18:51:00Z',
      'METAR KLGA 141851Z 35013G19KT 10SM FEW060 23/08 A3015 RMK AO2 SLP209 T02280078',
      'METAR',
    ),
    row(
      '2026-09-14T23:51:00Z',
      'METAR KLGA 142351Z 35013G19KT 10SM FEW060 22/08 A3015 RMK AO2 SLP209 T02170078 10239 20217 51022',
      'METAR',
    ),
  ]);
  const r = await replay(
    ['--city', 'nyc', '--date', '2026-09-14', '--observations', 'day', '--market', 'ev', '--json'],
    { files: { day: metar, ev: resolvedAt(ev, '72-73°F') } },
  );
  assert.equal(r.code, 0, r.stderr);
  const j = r.json!;
  assert.equal(j.kind, 'noaa-hourly');
  // 22.8 °C = 73.04 °F -> 73 °F from the routine 18:51 report; counting the SPECI would say 74 °F.
  assert.deepEqual([j.final?.reading, j.final?.bucket, j.match], [73, '72-73°F', true]);
  const text = await replay(['--city', 'nyc', '--date', '2026-09-14', '--observations', 'day', '--market', 'ev'], {
    files: { day: metar, ev: resolvedAt(ev, '72-73°F') },
  });
  assert.match(text.stdout, /^counts {6}routine hourly METARs only/m);
});
