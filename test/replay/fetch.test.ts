import { test } from 'node:test';
import assert from 'node:assert/strict';
import { eventSlugs } from '../../src/cities/market-slug.ts';
import type { ReplayUpstreams } from '../../src/replay/observations.ts';
import { gammaEvent, startFakeGamma, type GammaEventJson } from '../fakes/gamma.ts';
import { startFakeMetar } from '../fakes/metar.ts';
import { startFakeServer } from '../fakes/upstream.ts';
import { startFakeWeatherCom } from '../fakes/weather-com.ts';
import { crossing, NYC_LADDER, replay } from './helpers.ts';

/**
 * Replays without files, through the live adapters against the local fake upstreams (real HTTP,
 * real wire formats): weather.com history for a past day, METARs for a recent one, the Gamma event
 * (closed, in either slug form) and its resolution.
 */
const LABELS = NYC_LADDER.split(',');
const DAY_OBS = [
  { atMs: Date.parse('2026-07-15T03:51:00Z'), tempC: 27.8 }, // the evening before, locally
  { atMs: Date.parse('2026-07-15T04:51:00Z'), tempC: 20.0 }, // 68 °F
  { atMs: Date.parse('2026-07-15T14:51:00Z'), tempC: 21.1 }, // 70
  { atMs: Date.parse('2026-07-15T18:51:00Z'), tempC: 23.3 }, // 74
  { atMs: Date.parse('2026-07-16T04:10:00Z'), tempC: 30.0 }, // the morning after
];

function resolved(event: GammaEventJson, winner: string): GammaEventJson {
  return {
    ...event,
    closed: true,
    markets: event.markets.map((m) => ({
      ...m,
      closed: true,
      outcomePrices: m.groupItemTitle === winner ? '["1", "0"]' : '["0", "1"]',
    })),
  };
}

const upstreams = (over: Partial<ReplayUpstreams>): ReplayUpstreams => ({
  weatherSource: 'wu',
  weatherUrl: 'http://127.0.0.1:9',
  metarUrl: 'http://127.0.0.1:9',
  gammaUrl: 'http://127.0.0.1:9',
  timeoutMs: 2_000,
  ...over,
});

test('weather.com history for a past day and the closed Gamma event (older slug without the year), resolved', async (t) => {
  const [wu, gamma] = await Promise.all([startFakeWeatherCom(), startFakeGamma()]);
  t.after(() => Promise.all([wu.close(), gamma.close()]).then(() => undefined));
  wu.setObservations('KLGA:9:US', 'America/New_York', DAY_OBS);
  gamma.put(resolved(gammaEvent({ token: 'nyc', date: '2026-07-15', labels: LABELS, withYear: false }), '74-75°F'));

  const r = await replay(['--city', 'nyc', '--date', '2026-07-15', '--json'], {
    upstreams: upstreams({ weatherUrl: wu.url, wuApiKey: wu.apiKey, gammaUrl: gamma.url }),
  });
  assert.equal(r.code, 0, r.stderr);
  const j = r.json!;
  assert.equal(j.observations.source, 'wu');
  assert.deepEqual(j.signals.map(crossing), [
    { seq: 1, old: [68, '68-69°F'], new: [70, '70-71°F'] },
    { seq: 2, old: [70, '70-71°F'], new: [74, '74-75°F'] },
  ]);
  assert.deepEqual(
    [j.final?.bucket, j.market.origin, j.market.slug, j.market.resolvedBucket, j.match],
    ['74-75°F', 'gamma', 'highest-temperature-in-nyc-on-july-15', '74-75°F', true],
  );
  // The station-local day in °F, as the live poller asks; the key never reaches the output.
  assert.deepEqual([wu.requests[0]!.query.get('units'), wu.requests[0]!.query.get('startDate')], ['e', '20260715']);
  assert.equal(r.stdout.includes(wu.apiKey), false);
  const { withYear, withoutYear } = eventSlugs('nyc', '2026-07-15');
  assert.deepEqual(
    gamma.requests.map((q) => q.query.get('slug')),
    [withYear, withoutYear],
  );
});

test('a Gamma that returns closed events only when asked: the replay asks again with closed=true', async (t) => {
  const event = resolved(gammaEvent({ token: 'nyc', date: '2026-07-15', labels: LABELS }), '72-73°F');
  const gamma = await startFakeServer('gamma', (req) => ({
    status: 200,
    body: req.query.get('closed') === 'true' && req.query.get('slug') === event.slug ? [event] : [],
  }));
  const wu = await startFakeWeatherCom();
  t.after(() => Promise.all([wu.close(), gamma.close()]).then(() => undefined));
  wu.setObservations('KLGA:9:US', 'America/New_York', DAY_OBS);
  const r = await replay(['--city', 'nyc', '--date', '2026-07-15'], {
    upstreams: upstreams({ weatherUrl: wu.url, wuApiKey: wu.apiKey, gammaUrl: gamma.url }),
  });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /resolved {4}72-73°F {2}match: false/);
  assert.deepEqual(
    gamma.requests.map((q) => q.query.get('closed')),
    [null, null, 'true'],
  );
});

test('METARs for a recent day through the live adapter; an event still open has no resolution', async (t) => {
  const now = Date.parse('2026-07-16T06:00:00Z');
  const [metar, gamma] = await Promise.all([startFakeMetar({ now: () => now }), startFakeGamma()]);
  t.after(() => Promise.all([metar.close(), gamma.close()]).then(() => undefined));
  metar.setReports('KLGA', DAY_OBS);
  gamma.put(gammaEvent({ token: 'nyc', date: '2026-07-15', labels: LABELS }));
  const r = await replay(['--city', 'nyc', '--date', '2026-07-15', '--json'], {
    nowMs: now,
    upstreams: upstreams({ weatherSource: 'metar', metarUrl: metar.url, gammaUrl: gamma.url }),
  });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.json!.observations.source, 'metar');
  assert.deepEqual(
    r.json!.signals.map((s) => s.new.bucket),
    ['70-71°F', '74-75°F'],
  );
  assert.deepEqual([r.json!.market.resolvedBucket, 'match' in r.json!], [null, false]);
  // Labels given: only the weather is fetched.
  const labelsOnly = await replay(['--city', 'nyc', '--date', '2026-07-15', '--buckets', NYC_LADDER, '--json'], {
    nowMs: now,
    upstreams: upstreams({ weatherSource: 'metar', metarUrl: metar.url, gammaUrl: 'http://127.0.0.1:9' }),
  });
  assert.equal(labelsOnly.code, 0, labelsOnly.stderr);
  assert.equal(labelsOnly.json!.signals.length, 2);
});

test('fetch problems: METAR too far back, no WU key, no event and a day not begun are exit 2; an upstream failure is exit 1', async (t) => {
  const [wu, gamma] = await Promise.all([startFakeWeatherCom(), startFakeGamma()]);
  t.after(() => Promise.all([wu.close(), gamma.close()]).then(() => undefined));
  const nyc = ['--city', 'nyc', '--date', '2026-07-15'];

  const old = await replay([...nyc, '--buckets', NYC_LADDER], {
    nowMs: Date.parse('2026-07-20T00:00:00Z'),
    upstreams: upstreams({ weatherSource: 'metar' }),
  });
  assert.equal(old.code, 2);
  assert.match(
    old.stderr,
    /METARs reach back 48 hours, and nyc's 2026-07-15 began 116 hours ago; set WEATHER_SOURCE=wu/,
  );

  const noKey = await replay([...nyc, '--buckets', NYC_LADDER], { upstreams: upstreams({ weatherSource: 'wu' }) });
  assert.equal(noKey.code, 2);
  assert.match(noKey.stderr, /WEATHER_SOURCE=wu needs WU_API_KEY/);

  const future = await replay(['--city', 'nyc', '--date', '2026-12-25', '--buckets', NYC_LADDER], {
    upstreams: upstreams({ wuApiKey: wu.apiKey, weatherUrl: wu.url }),
  });
  assert.equal(future.code, 2);
  assert.match(future.stderr, /2026-12-25 has not begun yet in America\/New_York/);

  wu.setObservations('KLGA:9:US', 'America/New_York', DAY_OBS);
  const noEvent = await replay(nyc, {
    upstreams: upstreams({ weatherUrl: wu.url, wuApiKey: wu.apiKey, gammaUrl: gamma.url }),
  });
  assert.equal(noEvent.code, 2);
  assert.match(
    noEvent.stderr,
    /Gamma has no daily-high event for nyc on 2026-07-15; pass --market <file> or --buckets/,
  );

  wu.fault({ kind: 'status', status: 500 });
  const down = await replay([...nyc, '--buckets', NYC_LADDER], {
    upstreams: upstreams({ weatherUrl: wu.url, wuApiKey: wu.apiKey }),
  });
  assert.equal(down.code, 1);
  assert.match(down.stderr, /isocast replay: wu: HTTP 500/);

  wu.fault(null);
  gamma.fault({ kind: 'wrong-shape' });
  const garbage = await replay(nyc, {
    upstreams: upstreams({ weatherUrl: wu.url, wuApiKey: wu.apiKey, gammaUrl: gamma.url }),
  });
  assert.equal(garbage.code, 1);
  assert.match(garbage.stderr, /gamma: events response is not an array/);
});
