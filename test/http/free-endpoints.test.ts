import { test } from 'node:test';
import assert from 'node:assert/strict';
import { listen, testApp } from '../helpers/app.ts';
import { signalSchema, SampleSignal, SYNTHETIC_SAMPLE } from '../../src/signals/schemas.ts';
import { CityDetail, CityList } from '../../src/cities/schemas.ts';
import { Health } from '../../src/ops/routes.ts';
import { ROUTE_DOCS } from '../../src/app.ts';
import { built } from '../../src/lib/route-doc.ts';

/** A route's documented 200 shape, as /openapi.json publishes it. */
const documented = (path: string) => built(ROUTE_DOCS.find((d) => d.path === path)!.responses[200]!.schema!);

type Scenario = {
  name: string;
  method?: string;
  path: string;
  status: number;
  contentType?: RegExp;
  body?: (b: any) => void;
  headers?: Record<string, string | RegExp>;
};

const scenarios: Scenario[] = [
  {
    name: 'health',
    path: '/health',
    status: 200,
    body: (b) => {
      Health().parse(b);
      assert.equal(b.ok, true);
      assert.equal(b.service, 'isocast-api');
      assert.equal(b.mode, 'mock');
      assert.deepEqual(b.ofac, { listLoaded: false, extraConfigured: false, count: 0, ageSeconds: null });
    },
  },
  {
    name: 'city list',
    path: '/v1/cities',
    status: 200,
    body: (b) => {
      CityList().parse(b);
      assert.equal(b.count, 37);
      assert.equal(b.cities.length, 37);
      assert.ok(b.cities.every((c: any) => Number.isInteger(c.latestSeq)));
    },
  },
  {
    name: 'one city',
    path: '/v1/cities/wellington',
    status: 200,
    body: (b) => {
      CityDetail().parse(b);
      assert.equal(b.city.slug, 'wellington');
      assert.equal(b.targetDate, '2026-07-16');
      assert.equal(b.marketUrl, 'https://polymarket.com/event/highest-temperature-in-wellington-on-july-16-2026');
    },
  },
  {
    name: 'city local day behind UTC',
    path: '/v1/cities/los-angeles',
    status: 200,
    body: (b) => assert.equal(b.targetDate, '2026-07-15'),
  },
  {
    name: 'unknown city',
    path: '/v1/cities/atlantis',
    status: 404,
    body: (b) => assert.equal(b.error, 'unknown city'),
  },
  {
    name: 'inactive city',
    path: '/v1/cities/hong-kong',
    status: 404,
    body: (b) => assert.equal(b.error, 'unknown city'),
  },
  {
    name: 'sample without city',
    path: '/v1/sample',
    status: 200,
    body: (b) => {
      SampleSignal().parse(b);
      assert.equal(b.sample, true);
      assert.equal(b.synthetic, true);
    },
  },
  {
    name: 'sample unknown city',
    path: '/v1/sample?city=atlantis',
    status: 200,
    body: (b) => assert.equal(b.synthetic, true),
  },
  {
    name: 'sample with real seq 1',
    path: '/v1/sample?city=nyc',
    status: 200,
    body: (b) => {
      SampleSignal().parse(b);
      assert.equal(b.synthetic, false);
      assert.equal(b.seq, 1);
      assert.equal(b.city, 'nyc');
    },
  },
  {
    name: 'meta',
    path: '/v1/signals/meta',
    status: 200,
    body: (b) => {
      documented('/v1/signals/meta').parse(b);
      assert.equal(b.city, undefined);
      assert.equal(b.unitPriceUsd, 0.005);
      assert.equal(b.minSpendUsd, 0.01);
      assert.equal(b.currency, 'USDC');
      assert.equal(b.network, 'eip155:8453');
      assert.equal(b.tiers.length, 5);
      assert.deepEqual(b.tiers[2], { name: 'Standard', minCount: 100, unitPriceUsd: 0.0045, totalUsd: 0.45 });
    },
  },
  {
    name: 'meta for a city',
    path: '/v1/signals/meta?city=nyc',
    status: 200,
    body: (b) => {
      documented('/v1/signals/meta').parse(b);
      assert.equal(b.city, 'nyc');
      assert.equal(b.latestSeq, 2);
      assert.equal(b.signals, undefined);
    },
  },
  {
    name: 'meta unknown city',
    path: '/v1/signals/meta?city=atlantis',
    status: 404,
    body: (b) => assert.equal(b.error, 'unknown city'),
  },
  {
    name: 'terms text',
    path: '/terms.txt',
    status: 200,
    contentType: /^text\/plain/,
    headers: { 'x-terms-url': 'http://127.0.0.1:8402/terms.txt' },
  },
  {
    name: 'terms json',
    path: '/terms.json',
    status: 200,
    headers: { 'x-terms-url': 'http://127.0.0.1:8402/terms.txt' },
    body: (b) => {
      documented('/terms.json').parse(b);
      assert.match(b.version, /draft/);
      assert.ok(b.summary.some((s: string) => /resale|redistribut/i.test(s)));
    },
  },
  { name: 'unknown route', path: '/v2/nothing', status: 404, body: (b) => assert.equal(b.error, 'not found') },
  { name: 'wrong method', method: 'POST', path: '/v1/cities', status: 405, headers: { allow: 'GET, HEAD' } },
  { name: 'wrong method with param', method: 'DELETE', path: '/v1/cities/nyc', status: 405 },
];

function seedSignals(db: import('../../src/db/open.ts').Db) {
  const insert = db.prepare(
    'INSERT INTO signals (city, seq, target_date, new_bucket, observed_at, payload, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  for (const seq of [1, 2]) {
    const s = { ...SYNTHETIC_SAMPLE, seq, new: { ...SYNTHETIC_SAMPLE.new, bucket: seq === 1 ? '44-45°F' : '46-47°F' } };
    signalSchema().parse(s);
    insert.run('nyc', seq, s.targetDate, s.new.bucket, s.observedAt, JSON.stringify(s), Date.now());
  }
}

test('free endpoints answer with the spec shapes, and every JSON object carries the disclaimer', async (t) => {
  const env = testApp(t);
  seedSignals(env.db);
  for (const s of scenarios) {
    const res = await env.app.request(s.path, { method: s.method ?? 'GET' });
    assert.equal(res.status, s.status, `${s.name}: status`);
    const type = res.headers.get('content-type') ?? '';
    assert.match(type, s.contentType ?? /^application\/json/, `${s.name}: content type`);
    for (const [k, v] of Object.entries(s.headers ?? {})) {
      if (typeof v === 'string') assert.equal(res.headers.get(k), v, `${s.name}: header ${k}`);
      else assert.match(res.headers.get(k) ?? '', v);
    }
    const text = await res.text();
    if (type.startsWith('application/json')) {
      const body = JSON.parse(text);
      assert.equal(typeof body.disclaimer, 'string', `${s.name}: disclaimer`);
      assert.match(body.disclaimer, /not financial/);
      assert.match(body.disclaimer, /http:\/\/127\.0\.0\.1:8402\/terms\.txt/);
      s.body?.(body);
    } else {
      assert.match(text, /redistribut/);
    }
  }
});

test('the city list is cached for 30 seconds', async (t) => {
  const env = testApp(t);
  const seq = async () =>
    ((await (await env.app.request('/v1/cities')).json()) as any).cities.find((c: any) => c.slug === 'nyc').latestSeq;
  assert.equal(await seq(), 0);
  seedSignals(env.db);
  env.clock.advance(29_000);
  assert.equal(await seq(), 0, 'still cached at 29 s');
  env.clock.advance(1_000);
  assert.equal(await seq(), 2, 'refreshed at 30 s');
  const one = (await (await env.app.request('/v1/cities/nyc')).json()) as any;
  assert.equal(one.city.latestSeq, 2, 'single city is live');
});

test('the sample is never the latest signal', async (t) => {
  const env = testApp(t);
  seedSignals(env.db);
  const b = (await (await env.app.request('/v1/sample?city=nyc')).json()) as any;
  assert.equal(b.seq, 1);
  assert.equal(b.new.bucket, '44-45°F');
});

test('an unexpected error is a JSON 500 with the disclaimer and no stack', async (t) => {
  const env = testApp(t);
  env.app.get('/boom', () => {
    throw new Error('secret internals at /src/x.ts:1');
  });
  const res = await env.app.request('/boom');
  assert.equal(res.status, 500);
  const b = (await res.json()) as any;
  assert.deepEqual(Object.keys(b).sort(), ['disclaimer', 'error']);
  assert.equal(b.error, 'internal error');
  assert.ok(env.logger.lines.some((l) => l.includes('unhandled error')));
});

test('over a real socket: health, HEAD, and a bad query', async (t) => {
  const env = testApp(t);
  const base = await listen(t, env.app.fetch);
  const health = await fetch(`${base}/health`);
  assert.equal(health.status, 200);
  assert.equal(((await health.json()) as any).service, 'isocast-api');
  const head = await fetch(`${base}/v1/cities`, { method: 'HEAD' });
  assert.equal(head.status, 200);
  const meta = await fetch(`${base}/v1/signals/meta?city=`);
  assert.equal(meta.status, 404);
  assert.equal(typeof ((await meta.json()) as any).disclaimer, 'string');
});
