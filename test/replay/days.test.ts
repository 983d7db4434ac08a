import { test } from 'node:test';
import assert from 'node:assert/strict';
import { crossing, csv, replay } from './helpers.ts';

/**
 * Constructed days around the rules a market resolves by: the local calendar day (daylight-saving
 * days of 23 and 25 hours, midnight on both sides, a station 13 hours from UTC), the half-up
 * rounding at bucket edges, open-ended buckets, ladder gaps and older label shapes.
 */
const run = (
  city: string,
  date: string,
  observations: string,
  buckets: string,
  extra: string[] = [],
  files: Record<string, string> = {},
) =>
  replay(['--city', city, '--date', date, '--observations', 'day', '--buckets', buckets, '--json', ...extra], {
    files: { day: observations, ...files },
  });

test('spring-forward day (New York, 23 hours): 23:55 EDT counts, 00:05 the next day does not', async () => {
  const r = await run(
    'nyc',
    '2026-03-08',
    csv([
      ['2026-03-08T04:55:00Z', 60, 'F'], // 23:55 EST on the 7th
      ['2026-03-08T05:10:00Z', 40, 'F'], // 00:10 EST: baseline
      ['2026-03-08T06:55:00Z', 42, 'F'], // 01:55 EST
      ['2026-03-08T07:05:00Z', 43, 'F'], // 03:05 EDT, an hour of wall time never happened
      ['2026-03-09T03:55:00Z', 44, 'F'], // 23:55 EDT on the 8th
      ['2026-03-09T04:05:00Z', 50, 'F'], // 00:05 EDT on the 9th: inside a naive 24-hour window, outside the day
    ]),
    '41°F or below,42-43°F,44-45°F,46-47°F,48°F or higher',
  );
  assert.equal(r.code, 0, r.stderr);
  const j = r.json!;
  assert.deepEqual(j.localDay, { start: '2026-03-08T05:00:00.000Z', end: '2026-03-09T04:00:00.000Z', hours: 23 });
  assert.deepEqual([j.observations.inDay, j.observations.outsideDay], [4, 2]);
  assert.deepEqual(j.baseline?.bucket, '41°F or below');
  assert.deepEqual(j.signals.map(crossing), [
    { seq: 1, old: [40, '41°F or below'], new: [42, '42-43°F'] },
    { seq: 2, old: [43, '42-43°F'], new: [44, '44-45°F'] },
  ]);
  assert.deepEqual([j.final?.reading, j.final?.bucket], [44, '44-45°F']);
});

test('fall-back day (New York, 25 hours): both 01:30s and 23:30 EST count, 00:05 the next day does not', async () => {
  const r = await replay(
    [
      '--city',
      'nyc',
      '--date',
      '2026-11-01',
      '--observations',
      'day',
      '--buckets',
      '49°F or below,50-51°F,52-53°F,54-55°F,56-57°F,58°F or higher',
    ],
    {
      files: {
        day: csv([
          ['2026-11-01T03:55:00Z', 70, 'F'], // 23:55 EDT on Oct 31
          ['2026-11-01T05:30:00Z', 50, 'F'], // 01:30 EDT
          ['2026-11-01T06:30:00Z', 52, 'F'], // 01:30 EST, the repeated hour
          ['2026-11-02T04:30:00Z', 56, 'F'], // 23:30 EST: past 24 hours from local midnight, still the 1st
          ['2026-11-02T05:05:00Z', 60, 'F'], // 00:05 EST on the 2nd
        ]),
      },
    },
  );
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /local day {3}2026-11-01T04:00:00.000Z \.\. 2026-11-02T05:00:00.000Z \(25 h\)/);
  assert.match(r.stdout, /baseline {4}50°F 50-51°F at 2026-11-01 01:30 GMT-4 \(05:30Z\)/);
  assert.match(r.stdout, /signal #1 {2}50°F 50-51°F -> 52°F 52-53°F {2}at 2026-11-01 01:30 GMT-5 \(06:30Z\)/);
  assert.match(r.stdout, /signal #2 {2}52°F 52-53°F -> 56°F 56-57°F {2}at 2026-11-01 23:30 GMT-5 \(04:30Z\)/);
  assert.match(r.stdout, /observations 5 from csv file day: 3 in the local day, 2 outside \(ignored\)/);
  assert.match(r.stdout, /final high {2}56°F 56-57°F/);
});

test('a station 13 hours from UTC (Wellington, NZDT): the local day, not the UTC date, decides', async () => {
  const metar = (iso: string, temp: number) => ({
    icaoId: 'NZWN',
    obsTime: Date.parse(iso) / 1000,
    temp,
    metarType: 'METAR',
    rawOb: `METAR NZWN ${iso.slice(8, 10)}${iso.slice(11, 13)}${iso.slice(14, 16)}Z 34015KT 9999 FEW030 ${temp}/10 Q1012 NOSIG`,
  });
  const rows = [
    metar('2026-01-09T10:30:00Z', 25), // 23:30 on the 9th locally
    metar('2026-01-09T11:00:00Z', 15), // 00:00 on the 10th: local midnight opens the day
    metar('2026-01-09T20:00:00Z', 18), // 09:00
    metar('2026-01-10T02:00:00Z', 21), // 15:00
    metar('2026-01-10T10:59:00Z', 22), // 23:59
    metar('2026-01-10T11:00:00Z', 26), // 00:00 on the 11th, although the UTC date is still the 10th
  ];
  const r = await run(
    'wellington',
    '2026-01-10',
    JSON.stringify(rows),
    '16°C or below,17°C,18°C,19°C,20°C,21°C,22°C,23°C or higher',
  );
  assert.equal(r.code, 0, r.stderr);
  const j = r.json!;
  assert.deepEqual(j.localDay, { start: '2026-01-09T11:00:00.000Z', end: '2026-01-10T11:00:00.000Z', hours: 24 });
  assert.deepEqual(j.baseline, {
    reading: 15,
    unit: 'C',
    bucket: '16°C or below',
    observedAt: '2026-01-09T11:00:00.000Z',
  });
  assert.deepEqual(j.signals.map(crossing), [
    { seq: 1, old: [15, '16°C or below'], new: [18, '18°C'] },
    { seq: 2, old: [18, '18°C'], new: [21, '21°C'] },
    { seq: 3, old: [21, '21°C'], new: [22, '22°C'] },
  ]);
  assert.deepEqual([j.final?.reading, j.final?.bucket, j.observations.outsideDay], [22, '22°C', 2]);
});

test('readings exactly on bucket edges: half a degree rounds up into the next bucket, a bucket top stays', async () => {
  const r = await run(
    'nyc',
    '2026-07-15',
    csv([
      ['2026-07-15T05:00:00Z', 67, 'F'],
      ['2026-07-15T06:00:00Z', 67.4, 'F'], // 67
      ['2026-07-15T07:00:00Z', 67.5, 'F'], // 68: the lower edge of 68-69
      ['2026-07-15T08:00:00Z', 69, 'F'], // the top edge of 68-69
      ['2026-07-15T09:00:00Z', 21.1, 'C'], // 69.98 °F -> 70: °C tenths are converted before rounding
    ]),
    '65°F or below,66-67°F,68-69°F,70-71°F,72°F or higher',
  );
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(r.json!.signals.map(crossing), [
    { seq: 1, old: [67, '66-67°F'], new: [68, '68-69°F'] },
    { seq: 2, old: [69, '68-69°F'], new: [70, '70-71°F'] },
  ]);

  // 1 °C buckets, below zero: -2.5 rounds toward warmer (-2), as the station's display does.
  const toronto = await run(
    'toronto',
    '2026-01-20',
    csv([
      ['2026-01-20T06:00:00Z', -3.6, 'C'], // -4
      ['2026-01-20T12:00:00Z', -3.5, 'C'], // -3: the edge of -3°C
      ['2026-01-20T15:00:00Z', -2.5, 'C'], // -2
      ['2026-01-20T18:00:00Z', -1.51, 'C'], // -2
    ]),
    '-4°C or below,-3°C,-2°C,-1°C,0°C or higher',
  );
  assert.equal(toronto.code, 0, toronto.stderr);
  assert.deepEqual(toronto.json!.signals.map(crossing), [
    { seq: 1, old: [-4, '-4°C or below'], new: [-3, '-3°C'] },
    { seq: 2, old: [-3, '-3°C'], new: [-2, '-2°C'] },
  ]);
  assert.deepEqual(toronto.json!.final?.bucket, '-2°C');
});

test('open-ended bottom and top buckets: from "or below", a jump over several buckets, then "or higher" holds', async () => {
  const r = await run(
    'nyc',
    '2026-07-15',
    csv([
      ['2026-07-15T05:00:00Z', 60, 'F'],
      ['2026-07-15T12:00:00Z', 66, 'F'],
      ['2026-07-15T15:00:00Z', 85, 'F'], // straight past 68..77 into the open top: one signal
      ['2026-07-15T18:00:00Z', 95, 'F'], // still the open top: nothing
    ]),
    '65°F or below,66-67°F,68-69°F,70-71°F,72-73°F,74-75°F,76-77°F,78°F or higher',
  );
  assert.equal(r.code, 0, r.stderr);
  const j = r.json!;
  assert.equal(j.baseline?.bucket, '65°F or below');
  assert.deepEqual(j.signals.map(crossing), [
    { seq: 1, old: [60, '65°F or below'], new: [66, '66-67°F'] },
    { seq: 2, old: [66, '66-67°F'], new: [85, '78°F or higher'] },
  ]);
  assert.deepEqual([j.final?.reading, j.final?.bucket], [95, '78°F or higher']);
});

test('a ladder with a gap (a trimmed event): no signal into the gap, the final bucket is null and said so', async () => {
  const r = await run(
    'nyc',
    '2025-12-30',
    csv([
      ['2025-12-30T06:00:00Z', 26, 'F'],
      ['2025-12-30T18:00:00Z', 30, 'F'], // between 27°F or below and 32-33°F
    ]),
    '27°F or below,32-33°F,38°F or higher',
  );
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(r.json!.signals, []);
  assert.deepEqual([r.json!.final?.reading, r.json!.final?.bucket], [30, null]);
  assert.ok(r.json!.notes.some((n) => n.includes('falls in a gap')));
});

test('older label shapes: odd-low two-degree buckets, an en dash, kept as the market wrote them, and their resolution', async () => {
  const labels = ['52°F or below', '53-54°F', '55-56°F', '57-58°F', '59–60°F', '61°F or higher'];
  const event = {
    id: '77001',
    slug: 'highest-temperature-in-nyc-on-april-20',
    closed: true,
    markets: labels.map((l, i) => ({
      conditionId: `0x${String(i + 1).repeat(64)}`,
      groupItemTitle: l,
      outcomes: '["Yes", "No"]',
      outcomePrices: l === '59–60°F' ? '["1", "0"]' : '["0", "1"]',
      clobTokenIds: JSON.stringify([`${i}1`, `${i}2`]),
    })),
  };
  const obs = csv([
    ['2026-04-20T10:00:00Z', 54, 'F'],
    ['2026-04-20T14:00:00Z', 55, 'F'],
    ['2026-04-20T19:00:00Z', 60, 'F'],
    ['2026-04-20T20:00:00Z', 59, 'F'],
  ]);
  const r = await replay(['--city', 'nyc', '--date', '2026-04-20', '--observations', 'o', '--market', 'e', '--json'], {
    files: { o: obs, e: JSON.stringify(event) },
  });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(r.json!.signals.map(crossing), [
    { seq: 1, old: [54, '53-54°F'], new: [55, '55-56°F'] },
    { seq: 2, old: [55, '55-56°F'], new: [60, '59–60°F'] },
  ]);
  assert.deepEqual([r.json!.final?.bucket, r.json!.market.resolvedBucket, r.json!.match], ['59–60°F', '59–60°F', true]);
  assert.deepEqual(r.json!.buckets, labels);
});

test("Fahrenheit buckets for a city that resolves in °C today: readings are resolved in the ladder's °F", async () => {
  const rows = [
    ['2025-06-10T06:20:00Z', 14],
    ['2025-06-10T11:20:00Z', 16],
    ['2025-06-10T14:20:00Z', 17],
    ['2025-06-10T16:20:00Z', 16],
  ].map(([iso, temp]) => ({
    icaoId: 'EGLC',
    obsTime: Date.parse(iso as string) / 1000,
    temp,
    rawOb: `METAR EGLC 10${(iso as string).slice(11, 13)}20Z 24008KT 9999 ${temp}/09 Q1018`,
  }));
  const r = await run(
    'london',
    '2025-06-10',
    JSON.stringify(rows),
    '57°F or below,58-59°F,60-61°F,62-63°F,64°F or higher',
  );
  assert.equal(r.code, 0, r.stderr);
  const j = r.json!;
  assert.equal(j.unit, 'F');
  // 14 °C = 57.2 -> 57; 16 °C = 60.8 -> 61; 17 °C = 62.6 -> 63.
  assert.deepEqual(j.signals.map(crossing), [
    { seq: 1, old: [57, '57°F or below'], new: [61, '60-61°F'] },
    { seq: 2, old: [61, '60-61°F'], new: [63, '62-63°F'] },
  ]);
  assert.ok(j.notes.some((n) => n.includes('buckets are in °F while London resolves in °C')));
  assert.ok(j.notes.some((n) => n.includes('whole °C')));
});

test('observations only outside the local day: nothing fires and the day has no high', async () => {
  const r = await run(
    'nyc',
    '2026-07-15',
    csv([
      ['2026-07-15T03:59:59Z', 90, 'F'],
      ['2026-07-16T04:00:00Z', 91, 'F'],
    ]),
    '65°F or below,66°F or higher',
  );
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual([r.json!.baseline, r.json!.signals, r.json!.final], [null, [], null]);
  assert.ok(r.json!.notes.includes('no observation falls inside the local day'));
});
