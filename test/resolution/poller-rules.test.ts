import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { CITY_ROWS, createCatalog } from '../../src/cities/catalog.ts';
import { localDate } from '../../src/lib/local-day.ts';
import { createMetrics } from '../../src/lib/metrics.ts';
import { createPoller, type Poller } from '../../src/poller/poller.ts';
import { resolutionCheck } from '../../src/resolution/store.ts';
import { createPolymarketSource } from '../../src/sources/market/polymarket.ts';
import { createMetarWeather } from '../../src/sources/weather/metar.ts';
import { createWuWeather } from '../../src/sources/weather/wu.ts';
import { startFakeClob } from '../fakes/clob.ts';
import { gammaEvent, startFakeGamma, tokensOf, type GammaEventJson } from '../fakes/gamma.ts';
import { startFakeMetar } from '../fakes/metar.ts';
import { startFakeWeatherCom } from '../fakes/weather-com.ts';
import { offlineBrowser } from '../helpers/browser.ts';
import { listen, testApp } from '../helpers/app.ts';
import { NYC_LABELS } from '../poller/harness.ts';

/**
 * Match or pause end to end: a running server, a poller on fake Gamma / CLOB / METAR / weather.com
 * over real HTTP, and the market's own rule text in each fake event.
 */
const START = Date.parse('2026-07-15T19:00:00Z'); // 15:00 in New York, noon in Seattle
// The Fahrenheit ladder of the NYC fixtures (Seattle's rule-city events use it too).
const F_LABELS = NYC_LABELS;
const ADMIN_TOKEN = 'operator-token-for-tests-0123456789';
const TIMEOUT = 1500;

async function setup(
  t: Parameters<typeof testApp>[0] & { after(fn: () => unknown): void },
  cities: string[],
  rules: Record<string, Parameters<typeof gammaEvent>[0]['rule']>,
) {
  const metrics = createMetrics();
  let poller: Poller | null = null;
  const env = testApp(t, {
    nowMs: START,
    env: { ADMIN_TOKEN },
    deps: {
      metrics,
      pollerHealth: () => poller!.health(),
      ruleFor: (c) => poller?.ruleFor(c) ?? null,
      marketUrlFor: (c, d) => poller?.marketUrlFor(c, d) ?? null,
    },
  });
  const base = await listen(t, env.app.fetch);
  const [gamma, clob, metar, wu] = await Promise.all([
    startFakeGamma(),
    startFakeClob(),
    startFakeMetar({ now: env.clock.now }),
    startFakeWeatherCom(),
  ]);
  t.after(() => Promise.all([gamma.close(), clob.close(), metar.close(), wu.close()]));
  const catalog = createCatalog(CITY_ROWS.filter((c) => cities.includes(c.slug)));
  const events: Record<string, GammaEventJson> = {};
  for (const city of catalog.active) {
    const ev = gammaEvent({
      token: city.marketToken,
      date: localDate(city.timezone, START),
      labels: F_LABELS,
      cityName: city.displayName,
      rule: rules[city.slug],
    });
    events[city.slug] = ev;
    gamma.put(ev);
    F_LABELS.forEach((label, i) => {
      const tk = tokensOf(ev, label);
      clob.quote(tk.yes, tk.no, Math.round((0.02 + 0.08 * Math.min(i, 10 - i)) * 1000) / 1000);
    });
  }
  poller = createPoller({
    stores: env.stores,
    catalog,
    clock: env.clock,
    logger: env.logger,
    intervalMs: 1_000,
    metrics,
    weather: createWuWeather({ baseUrl: wu.url, apiKey: wu.apiKey, timeoutMs: TIMEOUT }),
    noaaWeather: createMetarWeather({ baseUrl: metar.url, clock: env.clock, timeoutMs: TIMEOUT }),
    market: createPolymarketSource({
      gammaUrl: gamma.url,
      clobUrl: clob.url,
      clock: env.clock,
      logger: env.logger,
      gammaTimeoutMs: TIMEOUT,
      clobTimeoutMs: TIMEOUT,
    }),
  });
  t.after(() => poller!.stop());
  const ago = (min: number) => env.clock.now() - min * 60_000;
  return {
    env,
    base,
    metrics,
    gamma,
    metar,
    wu,
    events,
    poller,
    ago,
    admin: async () =>
      (
        await fetch(`${base}/admin/data.json`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })
      ).json() as Promise<any>,
  };
}

test('a NOAA-rule city reads METAR and a WU-rule city reads weather.com, each signalling from its own source', async (t) => {
  const s = await setup(t, ['nyc', 'seattle'], { seattle: { kind: 'noaa' } });
  // Each station has decoy data in the other feed, 10 °F warmer: using the wrong feed would show.
  const both = (tempC: number, min: number) => {
    s.wu.addObservation('KLGA:9:US', 'America/New_York', { atMs: s.ago(min), tempC });
    s.metar.addReport('KLGA', { atMs: s.ago(min), tempC: tempC + 5.5 });
    s.metar.addReport('KSEA', { atMs: s.ago(min), tempC });
    s.wu.addObservation('KSEA:9:US', 'America/Los_Angeles', { atMs: s.ago(min), tempC: tempC + 5.5 });
  };
  both(20, 30); // 68 °F
  const first = await s.poller.tick();
  assert.deepEqual([first.baselines, first.paused, first.errors], [2, [], []]);
  s.env.clock.advance(1_000);
  both(21.2, 1); // 70 °F: both cross into 70-71
  const r = await s.poller.tick();
  const bySlug = Object.fromEntries(r.signals.map((x) => [x.city, x]));
  assert.deepEqual([bySlug.nyc?.source, bySlug.nyc?.new.bucket], ['wu', '70-71°F']);
  assert.deepEqual([bySlug.seattle?.source, bySlug.seattle?.new.bucket], ['metar', '70-71°F']);
  assert.ok(
    s.metar.requests.every((q) => q.query.get('ids') === 'KSEA'),
    'METAR is asked for the NOAA-rule station only',
  );
  assert.ok(
    s.wu.requests.every((q) => q.path.includes('/KLGA:9:US/')),
    'weather.com is asked for the WU-rule station only, colons literal',
  );

  const cities = (await (await fetch(`${s.base}/v1/cities`)).json()) as {
    cities: { slug: string; resolutionSource: string; station: string }[];
  };
  const listed = cities.cities
    .filter((c) => ['nyc', 'seattle', 'chicago'].includes(c.slug))
    .map((c) => [c.slug, c.resolutionSource, c.station]);
  assert.deepEqual(
    listed,
    [
      ['nyc', 'wu', 'KLGA'],
      ['chicago', 'wu', 'KORD'],
      ['seattle', 'noaa', 'KSEA'],
    ],
    'chicago: no event read, the catalog',
  );
  const detail = (await (await fetch(`${s.base}/v1/cities/seattle`)).json()) as { resolution: Record<string, unknown> };
  assert.deepEqual(detail.resolution, {
    targetDate: '2026-07-15',
    source: 'noaa',
    station: 'KSEA',
    unit: 'F',
    precision: 1,
    fallback: 'wu',
    url: 'https://www.weather.gov/wrh/timeseries?site=ksea',
    status: 'ok',
    pausedReason: null,
    observedWith: 'metar',
  });
});

test('an event whose rule names another station pauses the city: no signal, a metric, a log line, /admin and doctor say so', async (t) => {
  const s = await setup(t, ['nyc', 'chicago'], { nyc: { kind: 'wu', station: 'KNYC', stationName: 'Central Park' } });
  const add = (tempC: number, min: number) => {
    s.wu.addObservation('KLGA:9:US', 'America/New_York', { atMs: s.ago(min), tempC });
    s.wu.addObservation('KORD:9:US', 'America/Chicago', { atMs: s.ago(min), tempC });
  };
  add(20, 30);
  const first = await s.poller.tick();
  assert.deepEqual([first.paused, first.baselines, first.errors], [['nyc'], 1, []]);
  for (const temp of [21.2, 22.3, 23.4]) {
    s.env.clock.advance(1_000);
    add(temp, 1);
    const r = await s.poller.tick();
    assert.deepEqual(r.paused, ['nyc']);
    assert.deepEqual(
      r.signals.map((x) => x.city),
      ['chicago'],
    );
  }
  assert.equal(s.env.db.prepare("SELECT count(*) FROM signals WHERE city = 'nyc'").pluck().get(), 0);
  assert.equal(
    s.env.db.prepare("SELECT count(*) FROM day_state WHERE city = 'nyc'").pluck().get(),
    0,
    'a paused day keeps no reading either',
  );
  assert.ok(
    s.wu.requests.every((q) => !q.path.includes('KLGA')),
    'nothing is observed for a paused day',
  );

  const text = await (await fetch(`${s.base}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).text();
  assert.match(text, /^isocast_resolution_pauses_total\{city="nyc"\} 1$/m, 'counted once, when the day became paused');
  assert.match(text, /^isocast_cities_paused 1$/m);
  const warns = s.env.logger.lines.filter((l) => l.includes('city paused for the day'));
  assert.equal(warns.length, 1);
  assert.match(warns[0]!, /"level":"warn"/);
  assert.match(warns[0]!, /rule names station KNYC, the catalog watches KLGA/);

  const admin = await s.admin();
  assert.deepEqual(admin.poller.paused, [
    {
      city: 'nyc',
      displayName: 'NYC',
      targetDate: '2026-07-15',
      reason: 'rule names station KNYC, the catalog watches KLGA',
    },
  ]);
  const nycRow = admin.poller.cities.find((c: { city: string }) => c.city === 'nyc');
  assert.deepEqual([nycRow.rule.status, nycRow.rule.station, nycRow.rule.observedWith], ['paused', 'KNYC', null]);
  const city = (await (await fetch(`${s.base}/v1/cities/nyc`)).json()) as {
    city: { resolutionSource: string; station: string };
    resolution: { status: string };
  };
  assert.deepEqual([city.city.resolutionSource, city.city.station, city.resolution.status], ['wu', 'KNYC', 'paused']);
  const doctor = resolutionCheck(s.env.db, s.env.clock.now());
  assert.equal(doctor.status, 'warn');
  assert.match(doctor.detail, /1 city-day\(s\) paused \(no signals\): nyc 2026-07-15: rule names station KNYC/);
  await screenshotPaused(t, s);

  // The next day's event names the catalog's station again: the city resumes.
  const next = gammaEvent({ token: 'nyc', date: '2026-07-16', labels: F_LABELS, cityName: 'NYC' });
  s.gamma.put(next);
  s.env.clock.advance(24 * 3_600_000);
  s.wu.addObservation('KLGA:9:US', 'America/New_York', { atMs: s.ago(1), tempC: 20 });
  const d2 = await s.poller.tick();
  assert.ok(!d2.paused.includes('nyc'));
  assert.equal(resolutionCheck(s.env.db, s.env.clock.now() + 2 * 86_400_000).status, 'ok');
});

/** test-artifacts/admin-paused-city.png (docs/ keeps a copy refreshed by hand, never by npm test): the operator page's poller section with NYC paused and Chicago signalling. */
async function screenshotPaused(t: Parameters<typeof offlineBrowser>[0], s: Awaited<ReturnType<typeof setup>>) {
  const browser = await offlineBrowser(t, s.base, { viewport: { width: 1280, height: 900 } });
  if (!browser) return;
  const { page } = browser;
  await page.goto(`${s.base}/admin`, { waitUntil: 'load' });
  await page.waitForSelector('body[data-state="login"]');
  await page.fill('#token', ADMIN_TOKEN);
  await page.click('#login button[type=submit]');
  await page.waitForSelector('body[data-state="ready"]');
  assert.match(
    (await page.textContent('#poller-paused')) ?? '',
    /NYC paused for 2026-07-15: rule names station KNYC, the catalog watches KLGA/,
  );
  assert.match((await page.textContent('#poller-table')) ?? '', /NYC.*paused.*wu KNYC °F/);
  assert.match((await page.textContent('#poller-table')) ?? '', /Chicago.*ok.*wu KORD °F, obs wu/);
  const dir = join(import.meta.dirname, '..', '..', 'test-artifacts');
  mkdirSync(dir, { recursive: true });
  const shot = join(dir, 'admin-paused-city.png');
  await page.locator('#poller').screenshot({ path: shot });
}
