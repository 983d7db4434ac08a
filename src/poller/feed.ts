import type { Db } from '../db/open.ts';
import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/logger.ts';
import { createSimClock, createSimWeather } from '../sources/sim/model.ts';
import { createSimMarket } from '../sources/market/sim.ts';
import { CITY_ROWS, kindOf, lowStreamOf } from '../cities/catalog.ts';
import { localDate } from '../lib/local-day.ts';

/** A fresh simulated start's first day takes this much real time, so every city crosses within minutes. */
const SIM_WARM_UP_MS = 150_000;

/** The settings the poller's sources read; the server's Config carries them (config.ts). */
export interface FeedSettings {
  FEED: 'sim' | 'live';
  SIM_SPEED: number;
  SIM_SEED: string;
  DISCOVERY_INTERVAL_MS: number;
  ODDS_DEADLINE_MS: number;
  GAMMA_URL: string;
  CLOB_URL: string;
  METAR_URL: string;
  HKO_URL: string;
  WEATHER_SOURCE: 'wu' | 'metar';
  WEATHER_URL: string;
  WU_API_KEY?: string | undefined;
  WU_POLL_INTERVAL_MS: number;
}

/** The sources FEED selects (each documented on PollerDeps), and the clock whose local dates are market days. */
export async function createFeed(config: FeedSettings, deps: { db: Db; clock: Clock; logger: Logger }) {
  const shared = { discoveryIntervalMs: config.DISCOVERY_INTERVAL_MS, oddsDeadlineMs: config.ODDS_DEADLINE_MS };
  if (config.FEED === 'sim') {
    const simClock = createSimClock(deps.db, {
      speed: config.SIM_SPEED,
      real: deps.clock,
      warmUpRealMs: SIM_WARM_UP_MS,
    });
    const weather = createSimWeather({ seed: config.SIM_SEED, simClock });
    const market = createSimMarket({ seed: config.SIM_SEED, simClock, real: deps.clock });
    // Discovery through the same rule parser as Gamma's, so CITIES=all works in the demo as live.
    const discovery = {
      list: () => {
        const now = simClock.now();
        return Promise.all(
          CITY_ROWS.flatMap((city) => {
            const date = localDate(city.timezone, now);
            return [city, lowStreamOf(city)].map(async (stream) => {
              const { slug, rule } = await market.event(stream, date);
              return { slug, extreme: kindOf(stream), token: city.marketToken, date, name: city.displayName, rule };
            });
          }),
        );
      },
    };
    return { weather, noaaWeather: weather, hkoWeather: weather, discovery, market, dayClock: simClock, ...shared };
  }
  // The live sources (and their upstream schemas) are evaluated only in live mode: about 1.5 ms
  // of every simulated start (docs/performance.md, start-up).
  const { liveSources } = await import('./live-sources.ts');
  return { ...liveSources(config, deps.clock, deps.logger), dayClock: deps.clock, ...shared };
}
