import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../src/config.ts';
import { ODDS_DEADLINE_MS } from '../../src/poller/tick.ts';
import { createMetrics } from '../../src/lib/metrics.ts';
import { createWuWeather } from '../../src/sources/weather/wu.ts';
import { tokensOf } from '../fakes/gamma.ts';
import { startFakeWeatherCom } from '../fakes/weather-com.ts';
import { harness, NYC_LABELS, UPSTREAM_TIMEOUT_MS } from './harness.ts';

/**
 * Odds never hold a signal back more than the odds budget (10 s by default; short here), an empty
 * book does not discard the other prices, `reportedAt` is the station's own report time, and the
 * market is asked only when needed: Gamma while the day's event is unknown, the CLOB on a crossing.
 */
const DEADLINE_MS = 400;
/** Slack for a loaded 2-core machine on top of the budget. */
const SLACK_MS = 1_500;

test('the odds budget defaults to 10 s and the live poll to 5 s', () => {
  assert.equal(ODDS_DEADLINE_MS, 10_000);
  const c = loadConfig({ FEED: 'live' });
  assert.deepEqual([c.ODDS_DEADLINE_MS, c.POLL_INTERVAL_MS, c.WU_POLL_INTERVAL_MS], [10_000, 5_000, 30_000]);
  assert.throws(() => loadConfig({ ODDS_DEADLINE_MS: '60000' }), /ODDS_DEADLINE_MS: must be at most 10000/);
});

for (const fault of [
  { kind: 'status', status: 500 },
  { kind: 'hang' },
  { kind: 'not-json' },
  { kind: 'wrong-shape' },
] as const) {
  test(`CLOB ${fault.kind === 'status' ? fault.status : fault.kind} for good: stored with buckets null within the budget, not held back`, async (t) => {
    const h = await harness(t);
    const poller = h.makePoller({ oddsDeadlineMs: DEADLINE_MS });
    h.report(20.0, 30);
    await poller.tick();
    h.report(21.2, 2); // 70 °F, reported two minutes ago
    h.clob.fault(fault);
    h.env.clock.advance(1_000);
    const t0 = performance.now();
    const r = await poller.tick();
    const elapsed = performance.now() - t0;
    assert.deepEqual([r.signals.length, r.errors.length, r.backingOff.length], [1, 0, 0]);
    const s = r.signals[0]!;
    assert.deepEqual([s.new.bucket, s.buckets, s.bucketsAsOf], ['70-71°F', null, null]);
    assert.equal(
      s.observedAt,
      new Date(h.env.clock.now()).toISOString(),
      'observedAt is when the poll saw it: no hidden wait',
    );
    assert.equal(s.reportedAt, new Date(Math.floor((h.env.clock.now() - 1_000 - 120_000) / 1000) * 1000).toISOString());
    assert.ok(elapsed < DEADLINE_MS + SLACK_MS, `tick took ${Math.round(elapsed)} ms`);
    const stored = h.env.db.prepare('SELECT reported_at, payload FROM signals').get() as {
      reported_at: string;
      payload: string;
    };
    assert.equal(stored.reported_at, s.reportedAt);
    assert.equal(JSON.parse(stored.payload).buckets, null);
    h.clob.fault(null);
  });
}

test('a CLOB failure inside the budget is retried and the signal keeps its odds', async (t) => {
  const h = await harness(t);
  const poller = h.makePoller({ oddsDeadlineMs: 3_000 });
  h.report(20.0, 30);
  await poller.tick();
  h.report(21.2);
  h.clob.fault({ kind: 'status', status: 503, times: 2 });
  const r = await poller.tick();
  assert.equal(r.signals[0]!.buckets!.length, NYC_LABELS.length);
  assert.equal(h.clob.requests.length, 3);
  assert.ok(Date.parse(r.signals[0]!.bucketsAsOf!) - Date.parse(r.signals[0]!.observedAt) <= 3_000);
});

test('one bucket with an empty book: the others keep their prices, that one is flagged noQuote', async (t) => {
  const h = await harness(t);
  h.report(20.0, 30);
  await h.poller.tick();
  const tk = tokensOf(h.nycEvent, '84°F or higher');
  h.clob.setBook(tk.yes, { bids: [], asks: [] });
  h.clob.setBook(tk.no, { bids: [], asks: [] });
  h.report(21.2);
  const [s] = (await h.poller.tick()).signals;
  const top = s!.buckets!.find((b) => b.label === '84°F or higher')!;
  assert.deepEqual(
    { yes: top.yes, no: top.no, midpoint: top.midpoint, noQuote: top.noQuote },
    { yes: 1, no: 1, midpoint: 0.5, noQuote: true },
  );
  const b70 = s!.buckets!.find((b) => b.label === '70-71°F')!;
  assert.deepEqual([b70.yes, b70.no, b70.midpoint, b70.noQuote], [0.27, 0.75, 0.26, undefined]);
  assert.equal(s!.buckets!.filter((b) => b.noQuote).length, 1);
});

test("Gamma is not asked again once the day's event is known; the CLOB only on a crossing", async (t) => {
  const h = await harness(t);
  h.report(20.0, 30); // 68 °F
  await h.poller.tick();
  const gammaCalls = h.gamma.requests.length;
  assert.ok(gammaCalls >= 1);
  // Eight hours of ticks with rises inside the same bucket and repeats: no crossing.
  for (let i = 0; i < 40; i++) {
    h.env.clock.advance(12 * 60_000);
    if (i === 5) h.report(20.6); // 69 °F: same bucket
    const r = await h.poller.tick();
    assert.deepEqual([r.signals.length, r.errors.length], [0, 0]);
  }
  assert.equal(h.gamma.requests.length, gammaCalls, 'no Gamma call for a known event');
  assert.equal(h.clob.requests.length, 0, 'no CLOB call without a crossing');
  h.report(21.2);
  assert.equal((await h.poller.tick()).signals.length, 1);
  assert.equal(h.clob.requests.length, 1, 'one /books call for the crossing');
  assert.equal(h.gamma.requests.length, gammaCalls);
});

test('reportedAt from METAR is the first report showing the new reading, not a later equal one', async (t) => {
  const h = await harness(t);
  h.report(20.0, 30);
  await h.poller.tick();
  h.report(21.1, 9); // 69.98 -> 70 °F, nine minutes ago: the report that crossed
  h.report(21.2, 3); // 70.16 -> 70 °F again, warmer in tenths but the same reading
  const [s] = (await h.poller.tick()).signals;
  assert.equal(s!.new.reading, 70);
  assert.equal(s!.reportedAt, new Date(Math.floor((h.env.clock.now() - 9 * 60_000) / 1000) * 1000).toISOString());
});

test('weather.com: reportedAt is valid_time_gmt; a feed with its own cadence is asked once per its interval', async (t) => {
  const wu = await startFakeWeatherCom();
  t.after(() => wu.close());
  const h = await harness(t, {
    weather: () =>
      createWuWeather({ baseUrl: wu.url, apiKey: wu.apiKey, timeoutMs: UPSTREAM_TIMEOUT_MS, minIntervalMs: 30_000 }),
  });
  const at = (minutesAgo: number) => Math.floor((h.env.clock.now() - minutesAgo * 60_000) / 1000) * 1000;
  wu.addObservation('KLGA:9:US', 'America/New_York', { atMs: at(20), tempC: 20 });
  assert.equal((await h.poller.tick()).baselines, 1);
  const asked = () => wu.requests.filter((q) => q.path.includes('/observations/')).length;
  assert.equal(asked(), 1);
  const reportAt = at(4);
  wu.addObservation('KLGA:9:US', 'America/New_York', { atMs: reportAt, tempC: 21.2 });
  for (let i = 0; i < 5; i++) {
    h.env.clock.advance(5_000);
    const r = await h.poller.tick();
    assert.deepEqual([r.signals.length, r.waitingForFeed, r.errors.length], [0, 1, 0], `tick ${i} waits for the feed`);
  }
  assert.equal(asked(), 1, 'not asked again inside 30 s');
  h.env.clock.advance(5_000);
  const [s] = (await h.poller.tick()).signals;
  assert.equal(asked(), 2);
  assert.deepEqual([s!.source, s!.new.reading, s!.reportedAt], ['wu', 70, new Date(reportAt).toISOString()]);
});

test('provenance: the METAR that crossed, its T-group value and tenths, receiptTime and the commit, in the payload and the columns', async (t) => {
  const h = await harness(t);
  const metrics = createMetrics();
  const poller = h.makePoller({ metrics });
  h.report(20.0, 30);
  await poller.tick();
  const obsAt = h.env.clock.now() - 6 * 60_000;
  // 21.2 °C = 70.16 °F -> 70: published by the source three minutes after the station's time.
  h.metar.addReport('KLGA', { atMs: obsAt, tempC: 21.2, availableAtMs: obsAt + 180_000 });
  h.env.clock.advance(2_000);
  const [s] = (await poller.tick()).signals;
  assert.ok(s);
  assert.equal(s.channel, 'metar-api');
  assert.match(s.rawReport ?? '', /^METAR KLGA \d{6}Z .* RMK AO2 SLP209 T02120\d{3}$/);
  assert.deepEqual([s.reportedValue, s.reportedUnit, s.reportedPrecision], [21.2, 'C', 0.1]);
  assert.equal(s.reportedAt, new Date(Math.floor(obsAt / 1000) * 1000).toISOString());
  assert.equal(s.availableAt, new Date(obsAt + 180_000).toISOString());
  assert.equal(s.observedAt, new Date(h.env.clock.now()).toISOString());
  assert.equal(s.storedAt, new Date(h.env.clock.now()).toISOString());
  const row = h.env.db
    .prepare(
      'SELECT channel, raw_report, reported_value, reported_unit, reported_precision, available_at, created_at, payload FROM signals WHERE seq = 1',
    )
    .get() as Record<string, unknown>;
  assert.deepEqual(
    [row.channel, row.raw_report, row.reported_value, row.reported_unit, row.reported_precision, row.available_at],
    [s.channel, s.rawReport, s.reportedValue, s.reportedUnit, s.reportedPrecision, s.availableAt],
  );
  assert.equal(new Date(row.created_at as number).toISOString(), s.storedAt);
  assert.deepEqual(JSON.parse(row.payload as string), s);
  // The same steps as /metrics histograms, by channel and stage.
  const text = metrics.render();
  const sum = (stage: string) =>
    Number(
      new RegExp(`isocast_signal_stage_seconds_sum\\{channel="metar-api",stage="${stage}"\\} (\\S+)`).exec(text)?.[1],
    );
  assert.equal(sum('report_to_available'), 180);
  assert.equal(sum('available_to_observed'), (Date.parse(s.observedAt) - obsAt - 180_000) / 1000);
  assert.equal(sum('observed_to_stored'), 0);
  assert.equal(sum('report_to_stored'), (Date.parse(s.storedAt!) - Date.parse(s.reportedAt!)) / 1000);
});
