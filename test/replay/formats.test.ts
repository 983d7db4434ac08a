import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { crossing, csv, fixture, NYC_LADDER, replay } from './helpers.ts';

/**
 * One constructed NYC day (2026-07-15, EDT) in each input format: weather.com whole °F, METAR
 * tenths of °C with T-groups (and a row of another station), and CSV mixing °C, °F, zones and
 * epoch seconds. Each file also holds a hot report at 23:51 the evening before and one at 00:10
 * the morning after, which must be ignored.
 */
const DAY = ['--city', 'nyc', '--date', '2026-07-15'];
const EVENT = ['--market', fixture('nyc-2026-07-15.event.json')];
const EXPECTED = [
  { seq: 1, old: [69, '68-69°F'], new: [70, '70-71°F'] },
  { seq: 2, old: [70, '70-71°F'], new: [72, '72-73°F'] },
  { seq: 3, old: [72, '72-73°F'], new: [74, '74-75°F'] },
];

for (const [format, file] of [
  ['wu', 'nyc-2026-07-15.wu.json'],
  ['metar', 'nyc-2026-07-15.metar.json'],
  ['csv', 'nyc-2026-07-15.csv'],
] as const) {
  test(`${format} file: the same signals, final bucket and resolution as the other formats`, async () => {
    const r = await replay([...DAY, '--observations', fixture(file), ...EVENT, '--json']);
    assert.equal(r.code, 0, r.stderr);
    const j = r.json!;
    assert.equal(j.observations.source, `${format} file ${fixture(file)}`);
    assert.deepEqual([j.observations.total, j.observations.inDay, j.observations.outsideDay], [9, 7, 2]);
    assert.deepEqual(j.baseline, { reading: 68, unit: 'F', bucket: '68-69°F', observedAt: '2026-07-15T04:51:00.000Z' });
    assert.deepEqual(j.signals.map(crossing), EXPECTED);
    assert.deepEqual(
      j.signals.map((s) => s.observedAt),
      ['2026-07-15T14:51:00.000Z', '2026-07-15T16:51:00.000Z', '2026-07-15T18:51:00.000Z'],
    );
    assert.deepEqual(j.final, { reading: 74, unit: 'F', bucket: '74-75°F', observedAt: '2026-07-15T18:51:00.000Z' });
    assert.deepEqual(j.market, {
      origin: 'file',
      slug: 'highest-temperature-in-nyc-on-july-15-2026',
      url: 'https://polymarket.com/event/highest-temperature-in-nyc-on-july-15-2026',
      resolvedBucket: '74-75°F',
    });
    assert.equal(j.match, true);
    assert.deepEqual(j.localDay, { start: '2026-07-15T04:00:00.000Z', end: '2026-07-16T04:00:00.000Z', hours: 24 });

    const human = await replay([...DAY, '--observations', fixture(file), '--format', format, ...EVENT]);
    assert.equal(human.code, 0);
    assert.match(human.stdout, /signal #3 {2}72°F 72-73°F -> 74°F 74-75°F {2}at 2026-07-15 14:51 GMT-4 \(18:51Z\)/);
    assert.match(human.stdout, /final high {2}74°F 74-75°F/);
    assert.match(human.stdout, /resolved {4}74-75°F {2}match: true/);
  });
}

test('a market that resolved elsewhere is match: false and still exit 0; an unresolved one has no match', async () => {
  const event = JSON.parse(readFileSync(fixture('nyc-2026-07-15.event.json'), 'utf8')) as {
    markets: { groupItemTitle: string; outcomePrices: string }[];
  };
  for (const m of event.markets) m.outcomePrices = m.groupItemTitle === '76-77°F' ? '["1", "0"]' : '["0", "1"]';
  const other = await replay(
    [...DAY, '--observations', fixture('nyc-2026-07-15.csv'), '--market', 'ev.json', '--json'],
    { files: { 'ev.json': JSON.stringify([event]) } },
  );
  assert.equal(other.code, 0);
  assert.deepEqual([other.json!.market.resolvedBucket, other.json!.match], ['76-77°F', false]);

  for (const m of event.markets) m.outcomePrices = '["0.4995", "0.5005"]';
  const open = await replay(
    [...DAY, '--observations', fixture('nyc-2026-07-15.csv'), '--market', 'ev.json', '--json'],
    { files: { 'ev.json': JSON.stringify(event) } },
  );
  assert.equal(open.code, 0);
  assert.equal(open.json!.market.resolvedBucket, null);
  assert.equal('match' in open.json!, false);

  const labels = await replay([...DAY, '--observations', fixture('nyc-2026-07-15.wu.json'), '--buckets', NYC_LADDER]);
  assert.equal(labels.code, 0);
  assert.doesNotMatch(labels.stdout, /resolved|match/);
});

test('bad input exits 2 with a message naming the problem, before anything is fetched', async () => {
  const obs = ['--observations', 'o.csv'];
  const good = csv([['2026-07-15T12:00:00Z', 20, 'C']]);
  const cases: [string[], Record<string, string>, RegExp][] = [
    [['--date', '2026-07-15', ...obs], {}, /--city is required/],
    // Any catalog city replays (Hong Kong included, whether or not CITIES serves it); others are unknown.
    [['--city', 'atlantis', '--date', '2026-07-15'], {}, /unknown city "atlantis"/],
    [['--city', 'nyc', '--date', '2026-02-30', ...obs], { 'o.csv': good }, /--date must be a calendar date/],
    [
      [...DAY, ...obs, '--market', 'x.json', '--buckets', NYC_LADDER],
      { 'o.csv': good },
      /--market or --buckets, not both/,
    ],
    [[...DAY, ...obs, '--format', 'xml'], { 'o.csv': good }, /--format must be one of wu, metar, csv/],
    [[...DAY, ...obs, '--bogus', '1'], { 'o.csv': good }, /unknown flag: --bogus/],
    [
      [...DAY, '--observations', 'missing.csv', '--buckets', NYC_LADDER],
      {},
      /cannot read observations file missing.csv: ENOENT/,
    ],
    [[...DAY, ...obs, '--buckets', NYC_LADDER], { 'o.csv': '' }, /observation file is empty/],
    [
      [...DAY, ...obs, '--buckets', NYC_LADDER],
      { 'o.csv': 'time,temp,unit\n2026-07-15T12:00:00,20,C' },
      /CSV line 2: time "2026-07-15T12:00:00" must be ISO 8601 with a zone/,
    ],
    [
      [...DAY, ...obs, '--buckets', NYC_LADDER],
      { 'o.csv': '2026-07-15T12:00:00Z,20,K' },
      /CSV line 1: unit "K" must be C or F/,
    ],
    [
      [...DAY, ...obs, '--buckets', NYC_LADDER],
      { 'o.csv': '2026-07-15T12:00:00Z,warm,C' },
      /CSV line 1: temperature "warm"/,
    ],
    [
      [...DAY, ...obs, '--buckets', NYC_LADDER],
      { 'o.csv': '2026-07-15T12:00:00Z,20' },
      /CSV line 1: expected time,temp,unit/,
    ],
    [
      [...DAY, ...obs, '--buckets', NYC_LADDER],
      { 'o.csv': '{"observations": [{"valid_time_gmt": 1784120000, "temp": 70}]}' },
      /metadata.units "e" \(°F\) or "m" \(°C\)/,
    ],
    [
      [...DAY, ...obs, '--buckets', NYC_LADDER],
      { 'o.csv': '{"metadata": {"units": "e"}, "observations": [{"temp": 70}]}' },
      /wu observations: malformed observations: observations.0.valid_time_gmt/,
    ],
    [
      [...DAY, ...obs, '--buckets', NYC_LADDER],
      { 'o.csv': '[{"icaoId": "KJFK", "obsTime": 1784120000, "temp": 20}]' },
      /METAR file has no reports for nyc's station KLGA; it has KJFK/,
    ],
    [
      [...DAY, ...obs, '--buckets', NYC_LADDER, '--format', 'metar'],
      { 'o.csv': good },
      /not JSON, so it cannot be metar/,
    ],
    [[...DAY, ...obs, '--buckets', '66-67°F,warm'], { 'o.csv': good }, /--buckets: "warm" is not a bucket label/],
    [[...DAY, ...obs, '--buckets', '66-67°F,20°C'], { 'o.csv': good }, /--buckets: buckets mix units/],
    [
      [...DAY, ...obs, '--buckets', '66-67°F,67-68°F'],
      { 'o.csv': good },
      /--buckets: buckets overlap: 66-67°F and 67-68°F/,
    ],
    [[...DAY, ...obs, '--market', 'm.json'], { 'o.csv': good, 'm.json': '{"slug": ' }, /market file is not JSON/],
    [
      [...DAY, ...obs, '--market', 'm.json'],
      { 'o.csv': good, 'm.json': '{"id": 1, "slug": "x", "markets": []}' },
      /market file: malformed event: markets/,
    ],
    [[...DAY, ...obs, '--market', 'm.json'], { 'o.csv': good, 'm.json': '[]' }, /market file holds 0 events/],
  ];
  for (const [argv, files, message] of cases) {
    const r = await replay(argv, { files });
    assert.equal(r.code, 2, `${argv.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, message, argv.join(' '));
    assert.equal(r.stdout, '');
  }
});

test('through main.ts: human output and exit 0, exit 2 on bad input', () => {
  const node = new URL('../../node_modules/.bin/node', import.meta.url).pathname;
  const main = new URL('../../src/main.ts', import.meta.url).pathname;
  const ok = spawnSync(
    node,
    [main, 'replay', ...DAY, '--observations', fixture('nyc-2026-07-15.metar.json'), ...EVENT],
    { encoding: 'utf8' },
  );
  assert.equal(ok.status, 0, ok.stderr);
  assert.match(ok.stdout, /^replay nyc 2026-07-15 {2}NYC, America\/New_York$/m);
  assert.match(ok.stdout, /match: true/);
  const bad = spawnSync(node, [main, 'replay', '--city', 'nyc', '--date', '15/07/2026'], { encoding: 'utf8' });
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /--date must be a calendar date YYYY-MM-DD/);
});
