import { type Catalog, CITY_ROWS, createCatalog } from '../../src/cities/catalog.ts';
import { localDate } from '../../src/lib/local-day.ts';
import { createPoller, type Poller } from '../../src/poller/poller.ts';
import type { PollerDeps } from '../../src/poller/poller.ts';
import { createPolymarketSource } from '../../src/sources/market/polymarket.ts';
import { createMetarWeather } from '../../src/sources/weather/metar.ts';
import type { WeatherSource } from '../../src/sources/weather/types.ts';
import { gammaEvent, startFakeGamma, tokensOf, type FakeGamma, type GammaEventJson } from '../fakes/gamma.ts';
import { startFakeClob, type FakeClob } from '../fakes/clob.ts';
import { startFakeMetar, type FakeMetar } from '../fakes/metar.ts';
import { testApp, type TestEnv } from '../helpers/app.ts';

/**
 * A running isocast server and a poller wired to local fake upstreams (Gamma, CLOB, METAR), all
 * over real HTTP and a real SQLite file. The poller's clock is the test's hand-moved clock, so
 * backoff and local days are exact; ticks are driven by `poller.tick()`.
 */
export const NYC_LABELS = [
  '65°F or below',
  '66-67°F',
  '68-69°F',
  '70-71°F',
  '72-73°F',
  '74-75°F',
  '76-77°F',
  '78-79°F',
  '80-81°F',
  '82-83°F',
  '84°F or higher',
];
export const START = Date.parse('2026-07-15T16:00:00Z'); // noon in New York
/**
 * Long enough that a loaded 2-core CI machine never times out a healthy local fake, short enough
 * that the hang tests (which wait it out) stay quick.
 */
export const UPSTREAM_TIMEOUT_MS = 1500;

export type Harness = {
  env: TestEnv;
  gamma: FakeGamma;
  clob: FakeClob;
  metar: FakeMetar;
  catalog: Catalog;
  nycEvent: GammaEventJson;
  poller: Poller;
  makePoller(over?: Partial<PollerDeps>): Poller;
  /** A KLGA report `minutesAgo` before the clock, in °C. */
  report(tempC: number, minutesAgo?: number): void;
};

export async function harness(
  t: { after(fn: () => Promise<void> | void): void },
  opts: { cities?: string[]; weather?: (h: { metar: FakeMetar; clock: TestEnv['clock'] }) => WeatherSource } = {},
): Promise<Harness> {
  // The running server asks the poller for the real event page, as main.ts wires it.
  let current: Poller | null = null;
  const env = testApp(t, {
    nowMs: START,
    deps: { marketUrlFor: (city, date) => current?.marketUrlFor(city, date) ?? null },
  });
  const [gamma, clob, metar] = await Promise.all([
    startFakeGamma(),
    startFakeClob(),
    startFakeMetar({ now: env.clock.now }),
  ]);
  t.after(() => Promise.all([gamma.close(), clob.close(), metar.close()]).then(() => undefined));
  const wanted = opts.cities ?? ['nyc'];
  const catalog = createCatalog(CITY_ROWS.filter((c) => wanted.includes(c.slug)));
  const date = localDate('America/New_York', START);
  const nycEvent = gammaEvent({ token: 'nyc', date, labels: NYC_LABELS, cityName: 'New York City' });
  gamma.put(nycEvent);
  NYC_LABELS.forEach((label, i) => {
    const tk = tokensOf(nycEvent, label);
    clob.quote(tk.yes, tk.no, Math.round((0.02 + 0.08 * Math.min(i, 10 - i)) * 1000) / 1000);
  });
  const pollers: Poller[] = [];
  const makePoller = (over: Partial<PollerDeps> = {}) => {
    const p = createPoller({
      stores: env.stores,
      catalog,
      clock: env.clock,
      logger: env.logger,
      intervalMs: 1_000,
      weather: opts.weather
        ? opts.weather({ metar, clock: env.clock })
        : createMetarWeather({ baseUrl: metar.url, clock: env.clock, timeoutMs: UPSTREAM_TIMEOUT_MS }),
      market: createPolymarketSource({
        gammaUrl: gamma.url,
        clobUrl: clob.url,
        clock: env.clock,
        logger: env.logger,
        gammaTimeoutMs: UPSTREAM_TIMEOUT_MS,
        clobTimeoutMs: UPSTREAM_TIMEOUT_MS,
        missingTtlMs: 60_000,
      }),
      ...over,
    });
    pollers.push(p);
    return p;
  };
  t.after(() => Promise.all(pollers.map((p) => p.stop())).then(() => undefined));
  const poller = makePoller();
  current = poller;
  const report = (tempC: number, minutesAgo = 1) =>
    metar.addReport('KLGA', { atMs: env.clock.now() - minutesAgo * 60_000, tempC });
  return { env, gamma, clob, metar, catalog, nycEvent, poller, makePoller, report };
}
