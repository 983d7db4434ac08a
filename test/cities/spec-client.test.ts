import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createCatalog } from '../../src/cities/catalog.ts';
import { CITY_ROWS } from '../../src/cities/catalog-data.ts';
import { listen, testApp } from '../helpers/app.ts';

/**
 * A client written from the spec alone: it lists the cities (spec 4.1: `cities`, `count`,
 * `disclaimer`; 37 cities) and would buy each. It must see the 37 daily-high cities and no
 * daily-low stream, while the low streams stay served for a client that asks for them.
 */
const SPEC_CITY_FIELDS = [
  'slug',
  'displayName',
  'country',
  'unit',
  'bucketWidth',
  'timezone',
  'resolutionSource',
  'station',
  'latestSeq',
];

async function served(t: Parameters<typeof testApp>[0]) {
  const env = testApp(t, {
    env: { CITIES: 'spec', MARKET_KINDS: 'high,low' },
    deps: { catalog: createCatalog(CITY_ROWS, { mode: 'spec' }, 'high,low') },
  });
  return listen(t, env.app.fetch);
}

test('a spec-only client lists 37 daily-high cities and no low stream', async (t) => {
  const base = await served(t);
  const res = await fetch(`${base}/v1/cities`);
  assert.equal(res.status, 200);
  const body = (await res.json()) as { cities: Record<string, unknown>[]; count: number; disclaimer: string };
  assert.equal(typeof body.disclaimer, 'string');
  assert.equal(body.count, 37);
  assert.equal(body.cities.length, 37);
  for (const city of body.cities) {
    for (const field of SPEC_CITY_FIELDS) assert.ok(field in city, `${city.slug} has ${field}`);
    assert.doesNotMatch(String(city.slug), /-low$/);
    assert.equal(city.kind, 'high');
  }
  // Each listed city resolves and sells as the spec's daily-high market.
  const one = (await (await fetch(`${base}/v1/cities/${body.cities[0]!.slug}`)).json()) as { marketUrl: string };
  assert.match(one.marketUrl, /highest-temperature-in-/);

  // The machine descriptions agree: /discovery's cities and llms' city table list no low stream.
  const index = (await (await fetch(`${base}/discovery`)).json()) as {
    cities: { count: number; slugs: string[] };
    lowStreams: { count: number; list: string; slugs: string[] };
  };
  assert.equal(index.cities.count, 37);
  assert.ok(index.cities.slugs.every((s) => !s.endsWith('-low')));
  assert.equal(index.lowStreams.count, 37);
  assert.match(index.lowStreams.list, /\/v1\/cities\?kind=low$/);
  const table = await (await fetch(`${base}/llms/weather-signals`)).text();
  assert.ok(!/^\| nyc-low /m.test(table), 'the llms city table lists cities only');
  assert.match(await (await fetch(`${base}/llms.txt`)).text(), /^37 cities are covered/m);
});

test('low streams stay served: ?kind=low lists them, ?kind=all both, a bad kind is a 400', async (t) => {
  const base = await served(t);
  const low = (await (await fetch(`${base}/v1/cities?kind=low`)).json()) as {
    cities: { slug: string; kind: string }[];
    count: number;
  };
  assert.equal(low.count, 37);
  assert.ok(low.cities.every((c) => c.kind === 'low' && c.slug.endsWith('-low')));
  const all = (await (await fetch(`${base}/v1/cities?kind=all&sort=recent`)).json()) as { count: number };
  assert.equal(all.count, 74);
  const high = (await (await fetch(`${base}/v1/cities?kind=high`)).json()) as { count: number };
  assert.equal(high.count, 37);
  const detail = await fetch(`${base}/v1/cities/nyc-low`);
  assert.equal(detail.status, 200);
  const bad = await fetch(`${base}/v1/cities?kind=both`);
  assert.equal(bad.status, 400);
  assert.equal(typeof ((await bad.json()) as { disclaimer: string }).disclaimer, 'string');
});
