import type { Config } from '../config.ts';
import type { Db } from '../db/open.ts';
import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/logger.ts';
import { createSimClock } from '../sources/sim/clock.ts';
import { createSimWeather } from '../sources/weather/sim.ts';
import { createSimMarket } from '../sources/market/sim.ts';
import { createPolymarketSource } from '../sources/market/polymarket.ts';
import { createWuWeather } from '../sources/weather/wu.ts';
import { createMetarWeather } from '../sources/weather/metar.ts';
import type { MarketSource } from '../sources/market/types.ts';
import type { WeatherSource } from '../sources/weather/types.ts';

/**
 * The weather and market sources FEED selects, and the clock whose local dates are market days.
 * `weather` observes Weather Underground-rule days (WEATHER_SOURCE: weather.com, or METAR as an
 * approximation); `noaaWeather` observes NOAA-rule days, always from METAR_URL (the reports NOAA's
 * timeseries shows).
 */
export type Feed = {
  weather: WeatherSource;
  noaaWeather: WeatherSource;
  market: MarketSource;
  dayClock: Clock;
  /** Real-time budget for a crossing's odds before it is stored with `buckets: null` (ODDS_DEADLINE_MS). */
  oddsDeadlineMs: number;
};

export function createFeed(config: Config, deps: { db: Db; clock: Clock; logger: Logger }): Feed {
  if (config.FEED === 'sim') {
    const simClock = createSimClock(deps.db, { speed: config.SIM_SPEED, real: deps.clock });
    const weather = createSimWeather({ seed: config.SIM_SEED, simClock });
    return {
      weather,
      noaaWeather: weather,
      market: createSimMarket({ seed: config.SIM_SEED, simClock, real: deps.clock }),
      dayClock: simClock,
      oddsDeadlineMs: config.ODDS_DEADLINE_MS,
    };
  }
  const market = createPolymarketSource({
    gammaUrl: config.GAMMA_URL,
    clobUrl: config.CLOB_URL,
    clock: deps.clock,
    logger: deps.logger,
  });
  const metar = createMetarWeather({ baseUrl: config.METAR_URL, clock: deps.clock });
  const weather =
    config.WEATHER_SOURCE === 'wu'
      ? // loadConfig refuses FEED=live + wu without a key, so the key is present here.
        // One call per station: its own slower cadence keeps the shared key's load modest (docs/signal-engine.md).
        createWuWeather({
          baseUrl: config.WEATHER_URL,
          apiKey: config.WU_API_KEY ?? '',
          minIntervalMs: config.WU_POLL_INTERVAL_MS,
        })
      : metar;
  return { weather, noaaWeather: metar, market, dayClock: deps.clock, oddsDeadlineMs: config.ODDS_DEADLINE_MS };
}
