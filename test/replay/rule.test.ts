import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gammaEvent } from '../fakes/gamma.ts';
import { RULE_FIXTURES } from '../resolution/rule-fixtures.ts';
import { fixture, replay } from './helpers.ts';

/** Replay shows the parsed rule of the day it replays and refuses another station unless --force. */
const DAY = ['--city', 'nyc', '--date', '2026-07-15'];
const OBS = ['--observations', fixture('nyc-2026-07-15.csv')];
const LABELS = ['65°F or below', '66-67°F', '68-69°F', '70-71°F', '72-73°F', '74-75°F', '76-77°F', '78°F or higher'];
const event = (rule?: Parameters<typeof gammaEvent>[0]['rule']) =>
  JSON.stringify([gammaEvent({ token: 'nyc', date: '2026-07-15', labels: LABELS, rule })]);

test('the event rule is shown, in --json and in text', async () => {
  const r = await replay([...DAY, ...OBS, '--market', 'ev.json', '--json'], { files: { 'ev.json': event() } });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(r.json!.rule, {
    source: 'wu',
    kind: 'wu-table',
    station: 'KLGA',
    unit: 'F',
    precision: 1,
    fallback: null,
    url: 'https://www.wunderground.com/history/daily/us/ny/new-york-city/KLGA',
    extreme: 'high',
  });
  const noaa = await replay([...DAY, ...OBS, '--market', 'ev.json'], { files: { 'ev.json': event({ kind: 'noaa' }) } });
  assert.equal(noaa.code, 0, noaa.stderr);
  assert.match(
    noaa.stdout,
    /^rule {8}noaa KLGA °F, hourly view, whole degrees, fallback wu \(https:\/\/www\.weather\.gov\/wrh\/timeseries\?site=klga\)$/m,
  );
  const labels = await replay([...DAY, ...OBS, '--buckets', LABELS.join(','), '--json']);
  assert.equal(labels.json!.rule, null, 'typed labels carry no rule');
});

test('a rule naming another station (or HKO) is refused with exit 2 unless --force, which notes it', async () => {
  const other = { 'ev.json': event({ kind: 'wu', station: 'KNYC' }) };
  const refused = await replay([...DAY, ...OBS, '--market', 'ev.json'], { files: other });
  assert.equal(refused.code, 2);
  assert.match(
    refused.stderr,
    /the event's rule resolves on station KNYC, but the observations are nyc's catalog station KLGA; pass --force/,
  );
  const forced = await replay([...DAY, ...OBS, '--market', 'ev.json', '--json', '--force'], { files: other });
  assert.equal(forced.code, 0, forced.stderr);
  assert.equal(forced.json!.rule!.station, 'KNYC');
  assert.ok(forced.json!.notes.some((n) => n.startsWith("forced: the event's rule resolves on station KNYC")));
  const hko = RULE_FIXTURES.find((f) => f.expected.source === 'hko')!;
  const hk = await replay([...DAY, ...OBS, '--market', 'ev.json'], {
    files: { 'ev.json': event({ description: hko.description, resolutionSource: null }) },
  });
  assert.equal(hk.code, 2);
  assert.match(hk.stderr, /resolves on hko \(https:\/\/www\.weather\.gov\.hk\/en\/cis\/climat\.htm\)/);
});

test('an unreadable rule is replayed with a note, not refused', async () => {
  const r = await replay([...DAY, ...OBS, '--market', 'ev.json', '--json'], {
    files: { 'ev.json': event({ description: 'Resolves on the city thermometer.', resolutionSource: null }) },
  });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.json!.rule!.source, 'unknown');
  assert.ok(r.json!.notes.some((n) => /rule could not be read .*station was not checked/.test(n)));
});

test('a NOAA-rule day is fetched from METAR even when WEATHER_SOURCE=wu; a WU-rule day from weather.com', async (t) => {
  const { startFakeGamma } = await import('../fakes/gamma.ts');
  const { startFakeMetar } = await import('../fakes/metar.ts');
  const { startFakeWeatherCom } = await import('../fakes/weather-com.ts');
  const now = Date.parse('2026-07-16T06:00:00Z');
  const [gamma, metar, wu] = await Promise.all([
    startFakeGamma(),
    startFakeMetar({ now: () => now }),
    startFakeWeatherCom(),
  ]);
  t.after(() => Promise.all([gamma.close(), metar.close(), wu.close()]).then(() => undefined));
  metar.setReports('KLGA', [
    { atMs: Date.parse('2026-07-15T14:51:00Z'), tempC: 21.1 },
    { atMs: Date.parse('2026-07-15T18:51:00Z'), tempC: 23.3 },
  ]);
  wu.setObservations('KLGA:9:US', 'America/New_York', [{ atMs: Date.parse('2026-07-15T18:51:00Z'), tempC: 20 }]);
  const up = {
    weatherSource: 'wu' as const,
    weatherUrl: wu.url,
    wuApiKey: wu.apiKey,
    metarUrl: metar.url,
    gammaUrl: gamma.url,
    timeoutMs: 2_000,
  };
  gamma.put(gammaEvent({ token: 'nyc', date: '2026-07-15', labels: LABELS, rule: { kind: 'noaa' } }));
  const noaa = await replay([...DAY, '--json'], { upstreams: up, nowMs: now });
  assert.equal(noaa.code, 0, noaa.stderr);
  assert.deepEqual(
    [noaa.json!.rule!.source, noaa.json!.observations.source, noaa.json!.final!.reading],
    ['noaa', 'metar', 74],
  );
  assert.equal(wu.requests.length, 0);
  gamma.put(gammaEvent({ token: 'nyc', date: '2026-07-15', labels: LABELS }));
  const wuDay = await replay([...DAY, '--json'], { upstreams: up, nowMs: now });
  assert.deepEqual(
    [wuDay.json!.rule!.source, wuDay.json!.observations.source, wuDay.json!.final!.reading],
    ['wu', 'wu', 68],
  );
});
