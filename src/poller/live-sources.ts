import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/logger.ts';
import { createPolymarketSource } from '../sources/market/polymarket.ts';
import { createMetarWeather } from '../sources/weather/metar.ts';
import { createWuWeather } from '../sources/weather/wu.ts';
import { createHkoWeather } from '../sources/weather/hko.ts';
import { fetchDailyTemperatureEvents } from '../sources/market/gamma.ts';
import type { FeedSettings } from './feed.ts';

/** Per page of the tag listing; a run is at most a few pages. */
const DISCOVERY_TIMEOUT_MS = 10_000;

/** FEED=live: Polymarket's Gamma and CLOB, and the weather source WEATHER_SOURCE names (src/poller/feed.ts). */
export function liveSources(config: FeedSettings, clock: Clock, logger: Logger) {
  const metar = createMetarWeather({ baseUrl: config.METAR_URL, clock });
  return {
    // loadConfig refuses FEED=live + wu without a key, so the key is present here. One call per station:
    // its own slower cadence keeps the shared key's load modest (docs/signal-engine.md).
    weather:
      config.WEATHER_SOURCE === 'wu'
        ? createWuWeather({
            baseUrl: config.WEATHER_URL,
            apiKey: config.WU_API_KEY ?? '',
            minIntervalMs: config.WU_POLL_INTERVAL_MS,
          })
        : metar,
    noaaWeather: metar,
    hkoWeather: createHkoWeather({ baseUrl: config.HKO_URL }),
    discovery: {
      list: () => fetchDailyTemperatureEvents({ baseUrl: config.GAMMA_URL, timeoutMs: DISCOVERY_TIMEOUT_MS }),
    },
    market: createPolymarketSource({ gammaUrl: config.GAMMA_URL, clobUrl: config.CLOB_URL, clock, logger }),
  };
}
