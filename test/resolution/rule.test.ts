import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseResolutionRule } from '../../src/sources/market/resolution-rule.ts';
import { ruleText } from '../../src/sources/market/rule-text.ts';
import { parseGammaEvent } from '../../src/sources/market/gamma.ts';
import { judgeRule } from '../../src/resolution/judge.ts';
import { CITY_ROWS } from '../../src/cities/catalog.ts';
import { RULE_FIXTURES } from './rule-fixtures.ts';
import { createStores } from '../../src/stores.ts';

const pick = (r: ReturnType<typeof parseResolutionRule>) => ({
  source: r.source,
  kind: r.kind,
  station: r.station,
  unit: r.unit,
  precision: r.precision,
  fallback: r.fallback,
});

test('every known rule wording parses to its source, station, unit, precision and fallback', () => {
  for (const f of RULE_FIXTURES) {
    const r = parseResolutionRule(f.description, f.resolutionSource);
    assert.deepEqual(pick(r), f.expected, f.name);
    assert.equal(r.reason, undefined, f.name);
    assert.ok(r.url, f.name);
  }
});

test('the rule reads the same with the resolutionSource field present, and from the text alone', () => {
  for (const f of RULE_FIXTURES) {
    const fromText = parseResolutionRule(f.description, null);
    assert.deepEqual(pick(fromText), f.expected, `${f.name} (text only)`);
    assert.deepEqual(pick(parseResolutionRule(f.description, fromText.url)), f.expected, `${f.name} (with field)`);
  }
});

test('the real Gamma captures carry their rule through the event parser', () => {
  // Ladders of the captured events (NYC kept 3 of its buckets, Ankara 1) with the captured rule texts.
  const nyc = RULE_FIXTURES[0]!;
  const market = (label: string, i: number) => ({
    conditionId: '0x' + String(i).repeat(64),
    groupItemTitle: label,
    outcomes: '["Yes", "No"]',
    clobTokenIds: `["${i}1", "${i}2"]`,
  });
  const ev = parseGammaEvent({
    id: '128661',
    slug: 'highest-temperature-in-nyc-on-december-30',
    description: nyc.description,
    resolutionSource: nyc.resolutionSource,
    markets: [market('27°F or below', 1), market('32-33°F', 2), market('38°F or higher', 3)],
  });
  assert.deepEqual(pick(ev.rule), nyc.expected);
  const ankara = RULE_FIXTURES.find((f) => f.name.startsWith('3b'))!;
  const ev2 = parseGammaEvent({
    id: '869074',
    slug: 'highest-temperature-in-ankara-on-august-20-2026',
    markets: [
      {
        ...market('25°C or below', 4),
        description: ankara.description,
        resolutionSource: 'https://www.wunderground.com/history/daily/tr/%C3%A7ubuk/LTAC',
      },
    ],
  });
  assert.deepEqual(pick(ev2.rule), ankara.expected, 'rule only on the bucket market');
});

test('unknown or inconsistent wording is unknown, with a reason, never a guess', () => {
  const wu = RULE_FIXTURES[1]!.description;
  const noaa = RULE_FIXTURES[5]!.description;
  const cases: [string, string | null, string | null, RegExp][] = [
    ['empty', '', null, /no rule text/],
    [
      'the old fake text',
      'This market will resolve to the temperature range that contains the highest temperature recorded at the station on 2026-07-15.',
      null,
      /names no resolution source/,
    ],
    [
      'another provider',
      wu.replace('information from Wunderground', 'information from Meteostat'),
      null,
      /names no resolution source/,
    ],
    [
      'two providers named',
      wu.replace('information from Wunderground', 'information from Wunderground and NOAA'),
      null,
      /names no resolution source/,
    ],
    [
      'wu named, no wu page',
      wu.replace(/https:\/\/www\.wunderground\.com\S+/, 'https://example.com/x.'),
      null,
      /links no wu station page/,
    ],
    [
      'field names another station',
      wu,
      'https://www.wunderground.com/history/daily/gb/london/EGLL',
      /several wu stations: EGLC, EGLL/,
    ],
    ['NOAA text with a WU page', noaa, 'https://www.wunderground.com/history/daily/us/wa/seatac/KSEA', /two providers/],
    [
      'no unit',
      wu.replaceAll(' in degrees Celsius', '').replace('to whole degrees Celsius', 'to whole degrees'),
      null,
      /no temperature unit/,
    ],
    ['two units', wu.replace('whole degrees Celsius', 'whole degrees Fahrenheit'), null, /two temperature units/],
    ['no precision', wu.replace(/The resolution source for this market measures[^\n]*/, ''), null, /no precision/],
    [
      'unknown fallback',
      noaa.replace('the Weather Underground Daily Observations table', 'the Meteostat archive'),
      null,
      /fallback/,
    ],
  ];
  for (const [name, text, field, reason] of cases) {
    const r = parseResolutionRule(text, field);
    assert.equal(r.source, 'unknown', name);
    assert.deepEqual([r.station, r.unit, r.precision, r.fallback], [null, null, null, null], name);
    assert.match(r.reason ?? '', reason, name);
  }
});

test('station pages: ICAO from Weather Underground paths and NOAA sites, page URLs for HKO and CWA', () => {
  const nyc = CITY_ROWS.find((c) => c.slug === 'nyc')!;
  // The rule's own wording with its link taken out of the text: the page is the resolutionSource field alone.
  const pageStation = (kind: 'wu' | 'noaa', page: string) => {
    const t = ruleText(nyc, '2026-08-29', { kind });
    const r = parseResolutionRule(t.description.replaceAll(t.resolutionSource, ''), page);
    return r.source === 'unknown' ? r.reason : { source: r.source, station: r.station };
  };
  assert.deepEqual(pageStation('wu', 'https://www.wunderground.com/history/daily/tr/%C3%A7ubuk/LTAC'), {
    source: 'wu',
    station: 'LTAC',
  });
  assert.deepEqual(pageStation('wu', 'https://www.wunderground.com/history/daily/us/tx/dallas/KDAL/date/2026-8-20'), {
    source: 'wu',
    station: 'KDAL',
  });
  assert.deepEqual(pageStation('noaa', 'https://www.weather.gov/wrh/timeseries?site=LTFM'), {
    source: 'noaa',
    station: 'LTFM',
  });
  const none = 'the rule names wu but links no wu station page';
  assert.equal(pageStation('wu', 'https://www.wunderground.com/weather/us/ny/new-york'), none);
  assert.equal(pageStation('wu', 'not a url'), none);
});

test('the generated rule texts (simulated feed, fakes) parse back to the catalog of every active city', () => {
  for (const city of CITY_ROWS.filter((c) => c.active)) {
    for (const kind of ['wu', 'noaa'] as const) {
      const t = ruleText(city, '2026-08-29', { kind });
      const r = parseResolutionRule(t.description, t.resolutionSource);
      assert.deepEqual(
        pick(r),
        {
          source: kind,
          kind: kind === 'wu' ? 'wu-table' : city.country === 'US' ? 'noaa-hourly' : 'noaa-all',
          station: city.station,
          unit: city.unit,
          precision: 1,
          fallback: kind === 'noaa' ? 'wu' : null,
        },
        `${city.slug} ${kind}`,
      );
      assert.deepEqual(
        judgeRule(r, city, () => true),
        { status: 'ok', observe: kind },
      );
    }
  }
});

test('match or pause: station, unit, precision, unobservable and unknown sources pause; a feed must exist', () => {
  const nyc = CITY_ROWS.find((c) => c.slug === 'nyc')!;
  const rule = (over: object) => ({
    source: 'wu' as const,
    kind: 'wu-table' as const,
    station: 'KLGA',
    unit: 'F' as const,
    precision: 1 as const,
    fallback: null,
    url: null,
    ...over,
  });
  const all = () => true;
  assert.deepEqual(judgeRule(rule({}), nyc, all), { status: 'ok', observe: 'wu' });
  assert.deepEqual(judgeRule(rule({ source: 'noaa', fallback: 'wu' }), nyc, all), { status: 'ok', observe: 'noaa' });
  const reason = (r: ReturnType<typeof judgeRule>) => (r.status === 'paused' ? r.reason : 'ok');
  assert.match(
    reason(judgeRule(rule({ station: 'KNYC' }), nyc, all)),
    /rule names station KNYC, the catalog watches KLGA/,
  );
  assert.match(reason(judgeRule(rule({ unit: 'C' }), nyc, all)), /°C, the catalog's unit is °F/);
  assert.match(reason(judgeRule(rule({ precision: 0.1 }), nyc, all)), /0\.1°/);
  assert.match(
    reason(judgeRule(rule({ source: 'hko', station: 'https://www.weather.gov.hk/en/cis/climat.htm' }), nyc, all)),
    /resolves on the Hong Kong Observatory, the catalog watches KLGA/,
  );
  assert.match(
    reason(judgeRule(rule({ source: 'unknown', station: null, reason: 'the rule states no unit' }), nyc, all)),
    /not understood: the rule states no unit/,
  );
  assert.match(
    reason(judgeRule(rule({ source: 'noaa' }), nyc, (s) => s === 'wu')),
    /no weather feed configured for NOAA/,
  );
});

test('the simulated feed: every active city matches its rule (NOAA for three, WU for the rest) and none is paused', async (t) => {
  const { createFeed } = await import('../../src/poller/feed.ts');
  const { createPoller } = await import('../../src/poller/poller.ts');
  const { createCatalog } = await import('../../src/cities/catalog.ts');
  const { loadConfig } = await import('../../src/config.ts');
  const { openDb } = await import('../../src/db/open.ts');
  const { manualClock } = await import('../helpers/clock.ts');
  const { memoryLogger } = await import('../helpers/logger.ts');
  const { tempDir } = await import('../helpers/app.ts');
  const dir = tempDir(t);
  const config = loadConfig({ DATA_DIR: dir });
  const db = openDb(`${dir}/sim.db`);
  t.after(() => db.close());
  const clock = manualClock(Date.parse('2026-08-29T12:00:00Z'));
  const catalog = createCatalog();
  const feed = await createFeed(config, { db, clock, logger: memoryLogger() });
  const poller = createPoller({
    stores: createStores(db),
    catalog,
    clock,
    logger: memoryLogger(),
    intervalMs: config.POLL_INTERVAL_MS,
    ...feed,
  });
  const r = await poller.tick();
  assert.deepEqual([r.paused, r.errors, r.cities], [[], [], 37]);
  const rules = catalog.active.map((c) => poller.ruleFor(c)!);
  assert.deepEqual(
    rules.filter((x) => x.source === 'noaa').map((x) => x.city),
    ['seattle', 'sao-paulo', 'tel-aviv'],
  );
  for (const [i, c] of catalog.active.entries()) {
    assert.deepEqual(
      [rules[i]!.station, rules[i]!.unit, rules[i]!.precision, rules[i]!.status, rules[i]!.observedWith],
      [c.station, c.unit, 1, 'ok', 'sim'],
      c.slug,
    );
  }
});
