import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { CITY_ROWS, citySelection, createCatalog } from '../../src/cities/catalog.ts';
import { decideDiscovered } from '../../src/resolution/judge.ts';
import { discoveryCheck } from '../../src/resolution/store.ts';
import { createStores } from '../../src/stores.ts';
import { createAdminReport } from '../../src/admin/report.ts';
import { fetchDailyTemperatureEvents, readDiscoveredEvent } from '../../src/sources/market/gamma.ts';
import { openDb } from '../../src/db/open.ts';
import { gammaEvent, startFakeGamma, type GammaEventJson } from '../fakes/gamma.ts';
import { tempDir } from '../helpers/app.ts';

/**
 * Daily-low events discovered by their own tag and slug: `tag_slug=lowest-temperature`,
 * `lowest-temperature-in-<token>-on-...`, each matched to its city's `<city>-low` stream. The
 * capture is the daily-low events public pages show for 2026-06-05 (provenance in the file).
 */
const LOWS = JSON.parse(
  readFileSync(new URL('../fixtures/gamma-daily-low-2026-06-05.json', import.meta.url), 'utf8'),
) as { events: GammaEventJson[] };
const HIGHS = JSON.parse(
  readFileSync(new URL('../fixtures/gamma-daily-high-2026-09-15.json', import.meta.url), 'utf8'),
) as { events: GammaEventJson[] };
const everyFeed = () => true;

async function gammaWith(t: { after(fn: () => Promise<void>): void }, events: GammaEventJson[]) {
  const gamma = await startFakeGamma();
  t.after(() => gamma.close());
  for (const e of events) gamma.put(e);
  return gamma;
}

test('the 2026-06-05 low capture: 4 daily-low events under tag_slug=lowest-temperature, each read as a low with its station', async (t) => {
  const gamma = await gammaWith(t, LOWS.events);
  const events = await fetchDailyTemperatureEvents({ baseUrl: gamma.url, timeoutMs: 2_000 });
  assert.deepEqual(
    gamma.requests.map((r) => r.query.get('tag_slug')),
    ['highest-temperature', 'lowest-temperature'],
  );
  assert.deepEqual(
    events.map((e) => [e.extreme, e.token, e.date, e.name, e.rule.source, e.rule.station, e.rule.unit, e.rule.extreme]),
    [
      ['low', 'nyc', '2026-06-05', 'NYC', 'wu', 'KLGA', 'F', 'low'],
      ['low', 'london', '2026-06-05', 'London', 'wu', 'EGLC', 'C', 'low'],
      ['low', 'shanghai', '2026-06-05', 'Shanghai', 'wu', 'ZSPD', 'C', 'low'],
      ['low', 'seoul', '2026-06-05', 'Seoul', 'wu', 'RKSI', 'C', 'low'],
    ],
  );
});

test('4 low markets served from the 2026-06-05 capture: nyc-low, london-low, shanghai-low, seoul-low', async (t) => {
  const gamma = await gammaWith(t, LOWS.events);
  const events = await fetchDailyTemperatureEvents({ baseUrl: gamma.url, timeoutMs: 2_000 });
  const catalog = createCatalog(CITY_ROWS, citySelection('all'), 'high,low');
  const verdicts = decideDiscovered(events, catalog, everyFeed);
  const served = verdicts.filter((v) => v.served);
  assert.equal(served.length, 4);
  assert.deepEqual(
    served.map((v) => v.city),
    ['nyc-low', 'london-low', 'shanghai-low', 'seoul-low'],
  );
  // The spec cities' low streams keep their records: the same station, unit and page as the high.
  for (const v of served) {
    const rec = v.record!;
    assert.equal(rec.kind, 'low');
    assert.deepEqual(catalog.get(v.city), rec);
  }
});

test('a discovered city gets a low stream only when its own daily-low event is listed', async (t) => {
  const istanbul = HIGHS.events.find((e) => e.slug.startsWith('highest-temperature-in-istanbul-'))!;
  const gamma = await gammaWith(t, [istanbul]);
  const catalog = createCatalog(CITY_ROWS, citySelection('all'), 'high,low');
  const serve = async () => {
    const events = await fetchDailyTemperatureEvents({ baseUrl: gamma.url, timeoutMs: 2_000 });
    for (const v of decideDiscovered(events, catalog, everyFeed)) if (v.served) catalog.serve(v.record!);
  };
  await serve();
  assert.ok(catalog.get('istanbul'), 'the high is served');
  assert.equal(catalog.get('istanbul-low'), undefined, 'no low event, no low stream');
  // Istanbul's low, on the same station as its high (NOAA LTFM).
  const low = structuredClone(istanbul) as GammaEventJson;
  low.slug = istanbul.slug.replace('highest-temperature-in-', 'lowest-temperature-in-');
  low.title = String(istanbul.title).replace('Highest', 'Lowest');
  low.description = String(istanbul.description).replaceAll('highest', 'lowest');
  gamma.put(low);
  await serve();
  const rec = catalog.get('istanbul-low')!;
  assert.deepEqual([rec.kind, rec.baseSlug, rec.station, rec.unit], ['low', 'istanbul', 'LTFM', 'C']);
  assert.deepEqual(
    catalog.active.slice(-2).map((c) => c.slug),
    ['istanbul', 'istanbul-low'],
  );
});

test('MARKET_KINDS=high leaves the low events unserved, and says so; a low slug with a high rule is refused', () => {
  const events = LOWS.events.map((e) => readDiscoveredEvent(e)!);
  const highOnly = createCatalog(CITY_ROWS, citySelection('spec'), 'high');
  const v = decideDiscovered(events, highOnly, everyFeed);
  assert.ok(v.every((x) => !x.served && x.reason === 'a daily-low market, and MARKET_KINDS=high serves none'));
  assert.equal(highOnly.serve({ ...highOnly.get('nyc')!, slug: 'nyc-low', kind: 'low', baseSlug: 'nyc' }), false);

  const nyc = CITY_ROWS.find((c) => c.slug === 'nyc')!;
  const mixed = readDiscoveredEvent(
    gammaEvent({
      token: 'nyc',
      date: '2026-06-05',
      labels: ['60-61°F'],
      kind: 'low',
      rule: { kind: 'wu', extreme: 'high' },
    }),
  )!;
  assert.equal(mixed.extreme, 'low');
  const [w] = decideDiscovered([mixed], createCatalog([nyc], citySelection('spec'), 'high,low'), everyFeed);
  assert.deepEqual(
    [w!.city, w!.served, w!.reason],
    ['nyc-low', false, "the event is a daily-low market but its rule resolves on the day's highest temperature"],
  );
});

test('doctor and /admin list the low events not served with the stream, kind and reason', (t) => {
  const db = openDb(`${tempDir(t)}/isocast.db`);
  t.after(() => db.close());
  const catalog = createCatalog(CITY_ROWS, citySelection('london'), 'high,low');
  const events = LOWS.events.map((e) => readDiscoveredEvent(e)!);
  // NYC's low rule names no source this service knows: not served, and a warning.
  const nycLow = events.find((e) => e.token === 'nyc')!;
  nycLow.rule = { ...nycLow.rule, source: 'unknown', reason: 'the rule names no resolution source this service knows' };
  const verdicts = decideDiscovered(events, catalog, everyFeed);
  const stores = createStores(db);
  stores.discovery.replace(verdicts, Date.parse('2026-06-05T01:00:00Z'));

  const check = discoveryCheck(db);
  assert.equal(check.status, 'warn');
  assert.match(check.detail, /^4 daily-temperature events \(0 high, 4 low\), 1 stream served; not served:\n/);
  // One line per reason, with its count and streams: two share "not in the CITIES list".
  assert.match(check.detail, /^2 streams: observable, but not in the CITIES list[^\n]*: seoul-low, shanghai-low$/m);
  assert.match(check.detail, /^1 stream: rule not understood: the rule names no resolution source[^\n]*: nyc-low$/m);
  assert.equal(check.detail.split('\n').length, 3);

  const report = createAdminReport({ db, stores, catalog, paymentMode: 'mock', feed: 'live' })(
    Date.parse('2026-06-05T01:00:00Z'),
  );
  assert.equal(report.discovery.events, 4);
  const nyc = report.discovery.notServed.find((x) => x.city === 'nyc-low')!;
  assert.deepEqual(
    [nyc.kind, nyc.slug, nyc.targetDate],
    ['low', 'lowest-temperature-in-nyc-on-june-5-2026', '2026-06-05'],
  );
  assert.match(nyc.reason, /rule not understood/);
  assert.ok(!report.discovery.notServed.some((x) => x.city === 'london-low'), 'london-low is served');
});
