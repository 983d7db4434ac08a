import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CITY_ROWS, createCatalog } from '../../src/cities/catalog.ts';
import { testApp } from '../helpers/app.ts';
import { runScenarios } from '../helpers/scenarios.ts';

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

function served(t: Parameters<typeof testApp>[0]) {
  const env = testApp(t, {
    env: { CITIES: 'spec', MARKET_KINDS: 'high,low' },
    deps: { catalog: createCatalog(CITY_ROWS, { mode: 'spec' }, 'high,low') },
  });
  return env.app;
}

test('a spec-only client lists 37 daily-high cities and no low stream', async (t) => {
  const app = served(t);
  const get = async (path: string) => app.request(path);
  const res = await get(`/v1/cities`);
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
  const one = (await (await get(`/v1/cities/${body.cities[0]!.slug}`)).json()) as { marketUrl: string };
  assert.match(one.marketUrl, /highest-temperature-in-/);

  // The machine descriptions agree: /discovery's cities and llms' city table list no low stream.
  const index = (await (await get(`/discovery`)).json()) as {
    cities: { count: number; slugs: string[] };
    lowStreams: { count: number; list: string; slugs: string[] };
  };
  assert.equal(index.cities.count, 37);
  assert.ok(index.cities.slugs.every((s) => !s.endsWith('-low')));
  assert.equal(index.lowStreams.count, 37);
  assert.match(index.lowStreams.list, /\/v1\/cities\?kind=low$/);
  const table = await (await get(`/llms/weather-signals`)).text();
  assert.ok(!/^\| nyc-low /m.test(table), 'the llms city table lists cities only');
  assert.match(await (await get(`/llms.txt`)).text(), /^37 cities are covered/m);
});

test('low streams stay served: ?kind=low lists them, ?kind=all both, a bad kind is a 400', async (t) => {
  const app = served(t);
  const count = (n: number) => async (res: Response) =>
    assert.equal(((await res.json()) as { count: number }).count, n);
  await runScenarios(t, app, [
    {
      name: '?kind=low: the 37 low streams',
      path: '/v1/cities?kind=low',
      expect: {
        status: 200,
        check: async (res) => {
          const low = (await res.json()) as { cities: { slug: string; kind: string }[]; count: number };
          assert.equal(low.count, 37);
          assert.ok(low.cities.every((c) => c.kind === 'low' && c.slug.endsWith('-low')));
        },
      },
    },
    { name: '?kind=all: both', path: '/v1/cities?kind=all&sort=recent', expect: { status: 200, check: count(74) } },
    { name: '?kind=high', path: '/v1/cities?kind=high', expect: { status: 200, check: count(37) } },
    { name: 'a low stream in detail', path: '/v1/cities/nyc-low', expect: { status: 200 } },
    {
      name: 'a bad kind',
      path: '/v1/cities?kind=both',
      expect: {
        status: 400,
        check: async (res) => assert.equal(typeof ((await res.json()) as { disclaimer: string }).disclaimer, 'string'),
      },
    },
  ]);
});
