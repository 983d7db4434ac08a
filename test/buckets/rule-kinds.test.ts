import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  dailyExtreme,
  dailyHighReading,
  dailyHighReport,
  KIND_RULES,
  type RuleKind,
} from '../../src/buckets/daily-high.ts';
import { parseMetar } from '../../src/sources/weather/metar.ts';
import { parseResolutionRule } from '../../src/sources/market/resolution-rule.ts';
import { RULE_FIXTURES } from '../resolution/rule-fixtures.ts';

/**
 * Report strings: the SPECI `SPECI KSEA 241719Z ... T00670061 $` is a real report (quoted from the
 * qwx README, the KSEA example); `METAR KLGA 142351Z ... T02170078 ...` and
 * `METAR RKSI 100100Z ... 21/17 Q1009 NOSIG` are real aviationweather.gov rows
 * (shared/reference/upstream/aviationweather_metar_sample.json). The routine reports around them
 * are written in the same format with lower temperatures, so that a SPECI is where the day's
 * maximum appears; they are not a captured day (docs/resolution-rules.md, "Rule kinds").
 */
const row = (icaoId: string, iso: string, rawOb: string, metarType?: string) => ({
  icaoId,
  obsTime: Date.parse(iso) / 1000,
  temp: null,
  rawOb,
  ...(metarType ? { metarType } : {}),
});

function tGroupless(rawOb: string): number {
  const m = / (M?\d\d)\/(M?\d\d) /.exec(rawOb)!;
  return Number(m[1]!.replace('M', '-'));
}

test('the parser gives every known wording its kind, from the rule text', () => {
  const kinds = Object.fromEntries(
    RULE_FIXTURES.map((f) => [f.name.split('.')[0], parseResolutionRule(f.description).kind]),
  );
  assert.deepEqual(kinds, {
    '1': 'wu-table',
    '2': 'wu-table',
    '3': 'wu-table',
    '3b': 'wu-table',
    '4': 'noaa-all',
    '5': 'noaa-hourly',
    '6': 'hko',
    '7': 'cwa',
  });
  assert.equal(parseResolutionRule('nonsense').kind, null);
});

test('US rule (Show Hourly Data): a SPECI carrying the afternoon maximum is not in the hourly view', () => {
  // KSEA, 24 Mar local day (America/Los_Angeles, PDT: 07:00Z .. 07:00Z next day).
  const rows = [
    row(
      'KSEA',
      '2026-03-24T15:53:00Z',
      'METAR KSEA 241553Z 30006KT 2SM -RA BR OVC009 06/06 A2979 RMK AO2 SLP091 P0004 T00560056',
    ),
    row(
      'KSEA',
      '2026-03-24T16:53:00Z',
      'METAR KSEA 241653Z 31006KT 2SM -RA BR OVC007 06/06 A2978 RMK AO2 SLP088 P0003 T00610056',
    ),
    // The real SPECI: 6.7 °C = 44.06 °F -> 44 °F.
    row(
      'KSEA',
      '2026-03-24T17:19:00Z',
      'SPECI KSEA 241719Z 31007KT 1SM R16L/5500VP6000FT -RA BR BKN003 OVC011 07/06 A2977 RMK AO2 BKN003 V SCT P0005 T00670061 $',
    ),
    row(
      'KSEA',
      '2026-03-24T17:53:00Z',
      'METAR KSEA 241753Z 30007KT 3SM -RA BR OVC008 06/06 A2976 RMK AO2 SLP082 P0006 T00610056',
    ),
  ];
  const obs = parseMetar(rows).get('KSEA')!;
  assert.deepEqual(
    obs.map((o) => o.report),
    ['routine', 'routine', 'special', 'routine'],
  );
  const seattle = parseResolutionRule(RULE_FIXTURES.find((f) => f.name.startsWith('5.'))!.description);
  assert.equal(seattle.kind, 'noaa-hourly');
  const tz = 'America/Los_Angeles';
  // Hourly view: 6.1 °C = 42.98 °F -> 43 °F; with the SPECI, 44 °F (a different 2 °F bucket).
  assert.equal(dailyHighReading(obs, { timezone: tz, date: '2026-03-24', unit: 'F', kind: 'noaa-hourly' }), 43);
  assert.equal(dailyHighReading(obs, { timezone: tz, date: '2026-03-24', unit: 'F', kind: 'noaa-all' }), 44);
  assert.equal(dailyHighReading(obs, { timezone: tz, date: '2026-03-24', unit: 'F', kind: 'wu-table' }), 44);
  // The report time is the first routine report that showed 43 °F, not the SPECI.
  const hourly = dailyHighReport(obs, { timezone: tz, date: '2026-03-24', unit: 'F', kind: 'noaa-hourly' });
  assert.deepEqual([hourly?.reading, hourly?.reportedAtMs], [43, Date.parse('2026-03-24T16:53:00Z')]);
  // The report itself rides along for the signal's provenance: its T-group tenths and raw text.
  assert.equal(hourly?.report.atMs, Date.parse('2026-03-24T16:53:00Z'));
  assert.equal(hourly?.report.precision, 0.1);
  assert.match(hourly?.report.raw ?? '', /^METAR KSEA 241653Z/);
  assert.equal(dailyExtreme(obs, { timezone: tz, date: '2026-03-24', kind: 'noaa-hourly' })!.report, 'routine');
});

test('international rule (all times): a SPECI carrying the maximum counts', () => {
  // RKSI, Asia/Seoul day 10 Jun: whole-degree reports (no T-group), as most non-US stations send.
  const rows = [
    row('RKSI', '2026-06-10T01:00:00Z', 'METAR RKSI 100100Z 23004KT 160V310 8000 BKN015 21/17 Q1009 NOSIG'),
    row('RKSI', '2026-06-10T04:00:00Z', 'METAR RKSI 100400Z 24008KT 9999 FEW020 24/16 Q1008 NOSIG'),
    row('RKSI', '2026-06-10T04:48:00Z', 'SPECI RKSI 100448Z 25010KT 9999 -SHRA FEW020CB 25/16 Q1008'),
    row('RKSI', '2026-06-10T05:00:00Z', 'METAR RKSI 100500Z 25009KT 9999 -SHRA FEW020CB 23/17 Q1008 NOSIG'),
  ];
  const obs = parseMetar(rows.map((r) => ({ ...r, temp: tGroupless(r.rawOb) }))).get('RKSI')!;
  const saoPaulo = parseResolutionRule(RULE_FIXTURES.find((f) => f.name.startsWith('4.'))!.description);
  assert.equal(saoPaulo.kind, 'noaa-all');
  assert.equal(dailyHighReading(obs, { timezone: 'Asia/Seoul', date: '2026-06-10', unit: 'C', kind: 'noaa-all' }), 25);
  assert.equal(
    dailyHighReading(obs, { timezone: 'Asia/Seoul', date: '2026-06-10', unit: 'C', kind: 'noaa-hourly' }),
    24,
  );
});

test('the report type comes from metarType, else the raw report; unknown counts everywhere', () => {
  const obs = parseMetar([
    row(
      'KLGA',
      '2026-09-14T23:51:00Z',
      'METAR KLGA 142351Z 35013G19KT 10SM FEW060 22/08 A3015 RMK AO2 SLP209 T02170078 10239 20217 51022',
    ),
    row('KLGA', '2026-09-14T23:12:00Z', 'KLGA 142312Z 35013KT 10SM FEW060 23/08 RMK AO2 T02280078', 'SPECI'),
    row('KLGA', '2026-09-14T22:51:00Z', 'KLGA 142251Z 35013KT 10SM FEW060 22/08 RMK AO2 T02220078'),
  ]).get('KLGA')!;
  assert.deepEqual(
    obs.map((o) => o.report),
    ['routine', 'special', undefined],
  );
  for (const kind of Object.keys(KIND_RULES) as RuleKind[])
    assert.equal(KIND_RULES[kind].counts(undefined), true, kind);
});

test('HKO and CWA: the 0.1 °C maximum is rounded down; the others round half-up', () => {
  // One report of `temp` °C at Hong Kong noon, as the kind's day high in `unit`.
  const highOf = (kind: RuleKind, temp: number, unit: 'C' | 'F' = 'C') =>
    dailyHighReading([{ atMs: Date.parse('2026-03-16T04:00:00Z'), temp, unit: 'C' }], {
      timezone: 'Asia/Hong_Kong',
      date: '2026-03-16',
      unit,
      kind,
    });
  assert.equal(highOf('hko', 30.9), 30);
  assert.equal(highOf('hko', 31.0), 31);
  assert.equal(highOf('hko', 30.99999999), 31); // float noise is the source's 31.0
  assert.equal(highOf('hko', -0.1), -1);
  assert.equal(highOf('cwa', 28.5), 28);
  assert.equal(highOf('noaa-all', 28.5), 29);
  assert.equal(highOf('wu-table', 21.7, 'F'), 71);
  const day = [
    { atMs: Date.parse('2026-03-16T03:00:00Z'), temp: 24.6, unit: 'C' as const },
    { atMs: Date.parse('2026-03-16T06:00:00Z'), temp: 25.8, unit: 'C' as const },
  ];
  assert.equal(dailyHighReading(day, { timezone: 'Asia/Hong_Kong', date: '2026-03-16', unit: 'C', kind: 'hko' }), 25);
  assert.equal(
    dailyHighReading(day, { timezone: 'Asia/Hong_Kong', date: '2026-03-16', unit: 'C', kind: 'wu-table' }),
    26,
  );
});
