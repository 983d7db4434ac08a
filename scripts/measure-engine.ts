/**
 * Measures the signal engine against the local fake upstreams (test/fakes) over real HTTP and a
 * real SQLite file, with the real clock:
 *   1. detection latency: a fake METAR report raising a city into its next bucket -> the signal
 *      committed (onSignalCommitted), with the poller running at a 1 s interval;
 *   2. the bucketsAsOf - observedAt gap of those signals;
 *   3. the duration of one tick over the 37 active cities: cold (empty market cache), steady
 *      (no crossing), and with all 37 crossing at once (37 CLOB calls), for METAR and weather.com.
 * Usage: node scripts/measure-engine.ts [--changes 120] [--verbose]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCatalog, wuLocationId, type CityRecord } from '../src/cities/catalog.ts';
import { addDays, localDate } from '../src/lib/local-day.ts';
import { openDb } from '../src/db/open.ts';
import { systemClock } from '../src/lib/clock.ts';
import { createLogger } from '../src/lib/logger.ts';
import { formatLabel } from '../src/buckets/labels.ts';
import { convertTemp } from '../src/buckets/rounding.ts';
import { createPoller, type Poller } from '../src/poller/poller.ts';
import { createPolymarketSource } from '../src/sources/market/polymarket.ts';
import { createMetarWeather } from '../src/sources/weather/metar.ts';
import { createWuWeather } from '../src/sources/weather/wu.ts';
import type { WeatherSource } from '../src/sources/weather/types.ts';
import type { SignalPublic } from '../src/signals/schemas.ts';
import { gammaEvent, startFakeGamma, tokensOf } from '../test/fakes/gamma.ts';
import { startFakeClob } from '../test/fakes/clob.ts';
import { startFakeMetar } from '../test/fakes/metar.ts';
import { startFakeWeatherCom } from '../test/fakes/weather-com.ts';
import { createStores } from '../src/stores.ts';

const args = process.argv.slice(2);
const CHANGES = Number(args[args.indexOf('--changes') + 1] ?? 120) || 120;
const catalog = createCatalog();
const cities = catalog.active;
const logger = createLogger({ level: args.includes('--verbose') ? 'info' : 'error' });

/** 11-bucket ladder starting at `first` (whole degrees of the city's unit). */
function labels(city: CityRecord, first: number): string[] {
  const w = city.bucketWidth;
  const out = [formatLabel({ lo: Number.NEGATIVE_INFINITY, hi: first - 1, unit: city.unit })];
  for (let i = 0; i < 9; i++) out.push(formatLabel({ lo: first + i * w, hi: first + i * w + w - 1, unit: city.unit }));
  out.push(formatLabel({ lo: first + 9 * w, hi: Number.POSITIVE_INFINITY, unit: city.unit }));
  return out;
}
const FIRST = (c: CityRecord) => (c.unit === 'F' ? 60 : 10);
/** °C (tenths) whose resolved reading in the city's unit is `deg`. */
const toC = (c: CityRecord, deg: number) => Math.round(convertTemp(deg, c.unit, 'C') * 10) / 10;

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
};
const r1 = (x: number) => Math.round(x * 10) / 10;
const stats = (xs: number[]) => ({
  n: xs.length,
  p50: r1(pct(xs, 50)),
  p99: r1(pct(xs, 99)),
  max: r1(Math.max(...xs)),
  min: r1(Math.min(...xs)),
});

async function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'isocast-measure-'));
  const [gamma, clob, metar, wu] = await Promise.all([
    startFakeGamma(),
    startFakeClob(),
    startFakeMetar(),
    startFakeWeatherCom(),
  ]);
  const now = Date.now();
  for (const city of cities) {
    const today = localDate(city.timezone, now);
    for (const date of [today, addDays(today, 1)]) {
      const ev = gammaEvent({ token: city.marketToken, date, labels: labels(city, FIRST(city)) });
      gamma.put(ev);
      for (const l of labels(city, FIRST(city))) {
        const t = tokensOf(ev, l);
        clob.quote(t.yes, t.no, 0.09);
      }
    }
  }
  const close = async () => {
    await Promise.all([gamma.close(), clob.close(), metar.close(), wu.close()]);
    rmSync(dir, { recursive: true, force: true });
  };
  return { dir, gamma, clob, metar, wu, close };
}

type Env = Awaited<ReturnType<typeof setup>>;

function poller(
  env: Env,
  name: string,
  weather: WeatherSource,
  extra: { onSignalCommitted?: (s: SignalPublic) => void } = {},
): { poller: Poller; db: ReturnType<typeof openDb> } {
  const db = openDb(join(env.dir, `${name}.db`));
  const market = createPolymarketSource({ gammaUrl: env.gamma.url, clobUrl: env.clob.url, clock: systemClock, logger });
  return {
    db,
    poller: createPoller({
      stores: createStores(db),
      catalog,
      clock: systemClock,
      logger,
      weather,
      market,
      intervalMs: 1_000,
      ...extra,
    }),
  };
}

async function latency(env: Env) {
  const level = new Map<string, number>(); // current whole-degree high per city
  const pending = new Map<string, number>(); // city -> time its upstream changed
  const latencies: number[] = [];
  const gaps: number[] = [];
  let done: () => void = () => {};
  const finished = new Promise<void>((r) => {
    done = r;
  });
  const weather = createMetarWeather({ baseUrl: env.metar.url, clock: systemClock });
  const { poller: p, db } = poller(env, 'latency', weather, {
    onSignalCommitted: (s) => {
      const t0 = pending.get(s.city);
      if (t0 === undefined) return;
      latencies.push(performance.timeOrigin + performance.now() - t0);
      gaps.push(Date.parse(s.bucketsAsOf!) - Date.parse(s.observedAt));
      pending.delete(s.city);
      if (latencies.length >= CHANGES) done();
    },
  });
  for (const c of cities) {
    level.set(c.slug, FIRST(c));
    env.metar.addReport(c.station!, { atMs: Date.now() - 120_000, tempC: toC(c, FIRST(c)) });
  }
  await p.tick(); // baselines
  p.start();
  let issued = 0;
  while (issued < CHANGES) {
    await new Promise((r) => setTimeout(r, 150 + Math.random() * 350));
    const idle = cities.filter((c) => !pending.has(c.slug) && level.get(c.slug)! < FIRST(c) + 8 * c.bucketWidth);
    const c = idle[Math.floor(Math.random() * idle.length)];
    if (!c) continue;
    const next = level.get(c.slug)! + c.bucketWidth;
    level.set(c.slug, next);
    pending.set(c.slug, performance.timeOrigin + performance.now());
    env.metar.addReport(c.station!, { atMs: Date.now() - 1_000, tempC: toC(c, next) });
    issued++;
  }
  await Promise.race([finished, new Promise((r) => setTimeout(r, 15_000))]);
  await p.stop();
  db.close();
  return { latency: stats(latencies), gap: stats(gaps), lost: CHANGES - latencies.length };
}

async function tickTimes(env: Env, kind: 'metar' | 'wu') {
  const weather =
    kind === 'metar'
      ? createMetarWeather({ baseUrl: env.metar.url, clock: systemClock })
      : createWuWeather({ baseUrl: env.wu.url, apiKey: env.wu.apiKey });
  const { poller: p, db } = poller(env, `ticks-${kind}`, weather);
  let deg = new Map(cities.map((c) => [c.slug, FIRST(c)]));
  const push = () => {
    for (const c of cities) {
      const at = Date.now() - 60_000;
      if (kind === 'metar') env.metar.addReport(c.station!, { atMs: at, tempC: toC(c, deg.get(c.slug)!) });
      else env.wu.addObservation(wuLocationId(c)!, c.timezone, { atMs: at, tempC: toC(c, deg.get(c.slug)!) });
    }
  };
  push();
  const cold = await p.tick();
  const steady: number[] = [];
  for (let i = 0; i < 20; i++) steady.push((await p.tick()).durationMs);
  const crossing: { ms: number; signals: number }[] = [];
  for (let i = 0; i < 5; i++) {
    deg = new Map(cities.map((c) => [c.slug, deg.get(c.slug)! + c.bucketWidth]));
    push();
    const r = await p.tick();
    crossing.push({ ms: r.durationMs, signals: r.signals.length });
  }
  db.close();
  return { coldMs: cold.durationMs, coldBaselines: cold.baselines, steady: stats(steady), allCrossing: crossing };
}

async function phase<T>(fn: (env: Env) => Promise<T>): Promise<T> {
  const env = await setup();
  try {
    return await fn(env);
  } finally {
    await env.close();
  }
}

const lat = await phase(latency);
const tickMetar = await phase((env) => tickTimes(env, 'metar'));
const tickWu = await phase((env) => tickTimes(env, 'wu'));
const out = {
  cities: cities.length,
  pollIntervalMs: 1000,
  changes: CHANGES,
  detectionLatencyMs: lat.latency,
  lostChanges: lat.lost,
  bucketsAsOfMinusObservedAtMs: lat.gap,
  tickMetar,
  tickWu,
  node: process.version,
  cpus: (await import('node:os')).cpus().length,
};
process.stdout.write(JSON.stringify(out, null, 2) + '\n');
