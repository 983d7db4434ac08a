import { test } from 'node:test';
import assert from 'node:assert/strict';
import { type latencyRowOf, latencyWindows, percentiles, stageDurations } from '../../src/signals/latency.ts';
import { LatencyStats } from '../../src/signals/schemas.ts';
import { testApp } from '../helpers/app.ts';
import { signalPayload } from '../helpers/signals.ts';
import type { Db } from '../../src/db/open.ts';

type LatencyRow = ReturnType<typeof latencyRowOf>;

const NOW = Date.parse('2026-07-15T15:00:00Z');
const MIN = 60_000;

test('percentiles are nearest-rank figures some signal had; none without values', () => {
  const xs = Array.from({ length: 100 }, (_, i) => 100 - i);
  assert.deepEqual(percentiles(xs), { count: 100, p50Ms: 50, p90Ms: 90, p99Ms: 99 });
  assert.deepEqual(percentiles([7]), { count: 1, p50Ms: 7, p90Ms: 7, p99Ms: 7 });
  assert.deepEqual(percentiles([]), { count: 0, p50Ms: null, p90Ms: null, p99Ms: null });
  assert.deepEqual(percentiles([-250, 1000, 3000]), { count: 3, p50Ms: 1000, p90Ms: 3000, p99Ms: 3000 });
});

test('each step needs both of its instants; a skewed clock shows as a negative step, not hidden', () => {
  const r: LatencyRow = {
    city: 'nyc',
    channel: 'metar-api',
    reportedAtMs: 0,
    availableAtMs: 190_000,
    observedAtMs: 193_000,
    storedAtMs: 193_400,
  };
  assert.deepEqual(stageDurations(r), {
    reportToAvailable: 190_000,
    availableToObserved: 3_000,
    observedToStored: 400,
    reportToStored: 193_400,
  });
  assert.deepEqual(stageDurations({ ...r, availableAtMs: null, reportedAtMs: null }), {
    reportToAvailable: null,
    availableToObserved: null,
    observedToStored: 400,
    reportToStored: null,
  });
  assert.equal(stageDurations({ ...r, availableAtMs: 195_000 }).availableToObserved, -2_000);
});

test('windows: 24 h and 7 days by commit time, per source (channel) and per city, sorted', () => {
  const row = (city: string, channel: string | null, agoMs: number): LatencyRow => ({
    city,
    channel,
    reportedAtMs: NOW - agoMs - 200_000,
    availableAtMs: channel === 'metar-api' ? NOW - agoMs - 10_000 : null,
    observedAtMs: NOW - agoMs - 1_000,
    storedAtMs: NOW - agoMs,
  });
  const rows = [
    row('nyc', 'metar-api', 5 * MIN),
    row('london', 'metar-api', 60 * MIN),
    row('hong-kong', 'hko', 2 * 3_600_000),
    row('nyc', null, 3 * 86_400_000),
    row('nyc', 'metar-api', 8 * 86_400_000),
  ];
  const [day, week] = latencyWindows(rows, NOW);
  assert.deepEqual([day!.window, day!.signals, week!.window, week!.signals], ['24h', 3, '7d', 4]);
  assert.deepEqual(
    day!.bySource.map((s) => [s.channel, s.signals]),
    [
      ['hko', 1],
      ['metar-api', 2],
    ],
  );
  assert.deepEqual(
    week!.byCity.map((c) => [c.city, c.signals]),
    [
      ['hong-kong', 1],
      ['london', 1],
      ['nyc', 2],
    ],
  );
  assert.deepEqual(week!.bySource.at(-1)!.channel, 'unknown');
  const metar = day!.bySource[1]!.stages;
  assert.deepEqual(metar.reportToAvailable, { count: 2, p50Ms: 190_000, p90Ms: 190_000, p99Ms: 190_000 });
  assert.deepEqual(metar.availableToObserved, { count: 2, p50Ms: 9_000, p90Ms: 9_000, p99Ms: 9_000 });
  assert.equal(day!.bySource[0]!.stages.availableToObserved.count, 0, 'hko publishes no receipt time');
  assert.equal(day!.bySource[0]!.stages.reportToStored.p50Ms, 200_000);
});

function insert(db: Db, seq: number, t: { storedAtMs: number; channel: string; availableAgoMs: number | null }) {
  const p = signalPayload('nyc', seq);
  db.prepare(
    `INSERT INTO signals (city, seq, target_date, new_bucket, observed_at, reported_at, payload, created_at, channel, available_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    'nyc',
    seq,
    p.targetDate,
    p.new.bucket,
    new Date(t.storedAtMs - 500).toISOString(),
    new Date(t.storedAtMs - 240_000).toISOString(),
    JSON.stringify(p),
    t.storedAtMs,
    t.channel,
    t.availableAgoMs === null ? null : new Date(t.storedAtMs - t.availableAgoMs).toISOString(),
  );
}

test('GET /v1/stats/latency: free, read once per 30 s whatever the request rate, on the created_at index', async (t) => {
  const env = testApp(t, { nowMs: NOW });
  insert(env.db, 1, { storedAtMs: NOW - 10 * MIN, channel: 'metar-api', availableAgoMs: 3_500 });
  insert(env.db, 2, { storedAtMs: NOW - 2 * 86_400_000, channel: 'metar-api', availableAgoMs: 5_500 });
  insert(env.db, 3, { storedAtMs: NOW - 9 * 86_400_000, channel: 'metar-api', availableAgoMs: 1_000 });
  const get = async () => {
    const res = await env.app.request(`/v1/stats/latency`);
    assert.equal(res.status, 200);
    return { res, body: (await res.json()) as any };
  };
  const first = await get();
  assert.deepEqual(LatencyStats().parse(first.body), first.body);
  assert.match(first.res.headers.get('cache-control') ?? '', /^public, max-age=30$/);
  const [day, week] = first.body.windows;
  assert.deepEqual([day.signals, week.signals, first.body.truncated], [1, 2, false]);
  assert.deepEqual(day.bySource[0].stages.availableToObserved, { count: 1, p50Ms: 3_000, p90Ms: 3_000, p99Ms: 3_000 });
  assert.deepEqual(day.bySource[0].stages.observedToStored, { count: 1, p50Ms: 500, p90Ms: 500, p99Ms: 500 });
  assert.deepEqual(week.byCity[0].stages.reportToStored, { count: 2, p50Ms: 240_000, p90Ms: 240_000, p99Ms: 240_000 });
  assert.equal(typeof first.body.disclaimer, 'string');

  // A new signal and a burst of requests within the 30 s: the same figures, not a query each.
  insert(env.db, 4, { storedAtMs: NOW - MIN, channel: 'metar-api', availableAgoMs: 9_000 });
  let reads = 0;
  const real = env.stores.reader.latencyRows;
  env.stores.reader.latencyRows = (...a) => {
    reads++;
    return real(...a);
  };
  env.clock.advance(29_000); // inside the 30 s the figures are cached for
  const texts = await Promise.all(
    Array.from({ length: 20 }, async () => (await env.app.request('/v1/stats/latency')).text()),
  );
  assert.equal(new Set(texts).size, 1);
  assert.equal(JSON.parse(texts[0]!).windows[0].signals, 1);
  assert.equal(reads, 0);
  env.clock.advance(1_000);
  assert.equal((await get()).body.windows[0].signals, 2);

  const plan = env.db
    .prepare(
      'EXPLAIN QUERY PLAN SELECT city, channel, reported_at, available_at, observed_at, created_at FROM signals WHERE created_at > +? ORDER BY created_at DESC LIMIT +?',
    )
    .all(0, 10) as { detail: string }[];
  assert.match(plan.map((p) => p.detail).join('\n'), /USING INDEX signals_created_at/);
});
