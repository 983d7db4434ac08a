import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { citiesProblem, CITY_ROWS, citySelection, createCatalog } from '../../src/cities/catalog.ts';
import { decideDiscovered } from '../../src/resolution/judge.ts';
import { fetchDailyTemperatureEvents, readDiscoveredEvent } from '../../src/sources/market/gamma.ts';
import { httpJson } from '../../src/lib/http-client.ts';
import { startFakeGamma, type GammaEventJson } from '../fakes/gamma.ts';

/** A Gamma listing of 53 daily-high events for 2026-09-15 (provenance inside the file). */
const CAPTURE = JSON.parse(
  readFileSync(new URL('../fixtures/gamma-daily-high-2026-09-15.json', import.meta.url), 'utf8'),
) as { events: GammaEventJson[] };
const everyFeed = () => true;

async function gammaWithCapture(t: { after(fn: () => Promise<void>): void }) {
  const gamma = await startFakeGamma();
  t.after(() => gamma.close());
  for (const e of CAPTURE.events) gamma.put(e);
  return gamma;
}

test("discovery lists every daily-high event by tag slug (and asks the lows' tag too); tag=Weather finds nothing", async (t) => {
  const gamma = await gammaWithCapture(t);
  const events = await fetchDailyTemperatureEvents({ baseUrl: gamma.url, timeoutMs: 2_000 });
  assert.equal(events.length, 53);
  assert.ok(events.every((e) => e.extreme === 'high'));
  assert.deepEqual(
    gamma.requests.map((r) => r.query.get('tag_slug')),
    ['highest-temperature', 'lowest-temperature'],
  );
  // The filter that silently returns nothing for these events.
  const byTag = await httpJson({
    upstream: 'gamma',
    url: `${gamma.url}/events?tag=Weather&closed=false`,
    timeoutMs: 2_000,
  });
  assert.deepEqual(byTag, []);
  const hk = events.find((e) => e.token === 'hong-kong')!;
  assert.deepEqual([hk.date, hk.name, hk.rule.source, hk.rule.kind], ['2026-09-15', 'Hong Kong', 'hko', 'hko']);
  const nyc = events.find((e) => e.token === 'nyc')!;
  assert.deepEqual([nyc.rule.source, nyc.rule.kind, nyc.rule.station], ['noaa', 'noaa-hourly', 'KLGA']);
  assert.equal(events.find((e) => e.token === 'sao-paulo')!.rule.kind, 'noaa-all');
});

test('CITIES=all against the capture: 52 of 53 cities served, Jinan not (its rule names no station)', async (t) => {
  const gamma = await gammaWithCapture(t);
  const events = await fetchDailyTemperatureEvents({ baseUrl: gamma.url, timeoutMs: 2_000 });
  const catalog = createCatalog(CITY_ROWS, citySelection('all'));
  const verdicts = decideDiscovered(events, catalog, everyFeed);
  for (const v of verdicts) if (v.served) catalog.serve(v.record!);
  const notServed = verdicts.filter((v) => !v.served);
  assert.deepEqual(
    notServed.map((v) => [v.city, v.reason]),
    [['jinan', 'rule not understood: the rule names no resolution source this service knows']],
  );
  assert.equal(catalog.active.length, 52);
  // The spec's 37 keep their records; the newcomers take the rule's station.
  const spec = CITY_ROWS.filter((c) => c.active);
  for (const c of spec) assert.deepEqual(catalog.get(c.slug), c, c.slug);
  assert.equal(catalog.get('istanbul')!.station, 'LTFM');
  assert.equal(catalog.get('hong-kong')!.resolutionSource, 'hko');
  // Without a Hong Kong Observatory feed, Hong Kong is not served, and says why.
  const noHko = decideDiscovered(events, createCatalog(CITY_ROWS, citySelection('all')), (s) => s !== 'hko');
  assert.match(noHko.find((v) => v.city === 'hong-kong')!.reason!, /no configured feed observes hko/);
});

test('CITIES=spec serves the 37 and explains the rest; a list serves what it names', async (t) => {
  const gamma = await gammaWithCapture(t);
  const events = await fetchDailyTemperatureEvents({ baseUrl: gamma.url, timeoutMs: 2_000 });
  const spec = createCatalog(CITY_ROWS, citySelection('spec'));
  const v = decideDiscovered(events, spec, everyFeed);
  assert.equal(v.filter((x) => x.served).length, 37);
  assert.equal(spec.active.length, 37);
  assert.match(v.find((x) => x.city === 'hong-kong')!.reason!, /CITIES=spec/);
  const list = createCatalog(CITY_ROWS, citySelection('nyc, hong-kong'));
  assert.deepEqual(
    list.active.map((c) => c.slug),
    ['nyc'],
  );
  for (const x of decideDiscovered(events, list, everyFeed)) if (x.served) list.serve(x.record!);
  assert.deepEqual(
    list.active.map((c) => c.slug),
    ['nyc', 'hong-kong'],
  );
  assert.equal(list.get('chicago'), undefined);
});

test('CITIES values: spec, all, slugs; an unknown slug is a configuration problem', () => {
  assert.equal(citiesProblem('spec'), null);
  assert.equal(citiesProblem('all'), null);
  assert.equal(citiesProblem('nyc,hong-kong'), null);
  assert.match(citiesProblem('nyc,atlantis') ?? '', /unknown city atlantis/);
  assert.match(citiesProblem(',') ?? '', /must be spec, all/);
});

test('a Taipei CWA rule is not served: its open data needs a key', () => {
  const ev = readDiscoveredEvent({
    slug: 'highest-temperature-in-taipei-on-march-16-2026',
    title: 'Highest temperature in Taipei on March 16?',
    description:
      'This market will resolve to the temperature range that contains the highest temperature recorded by Taipei\'s Central Weather Administration in degrees Celsius on 16 Mar \'26.\n\nThe resolution source for this market will be information from the Taipei Central Weather Administration, specifically the highest reading under the "Temperature" column on the specified date once information is finalized for all hours on that date, available here: https://www.cwa.gov.tw/V8/C/W/OBS_Station.html?ID=46692\n\nThe resolution source for this market measures temperatures in Celsius to one decimal place (eg, 9.1°C).',
    markets: [],
  })!;
  assert.equal(ev.rule.kind, 'cwa');
  const [v] = decideDiscovered([ev], createCatalog(CITY_ROWS, citySelection('all')), everyFeed);
  assert.equal(v!.served, false);
  assert.match(v!.reason!, /needs an authorization key/);
});
