import type { SimClock } from '../sim/clock.ts';
import type { Observation } from '../../buckets/daily-high.ts';
import { simObservations } from '../sim/model.ts';
import type { WeatherSource } from './types.ts';

/** FEED=sim weather: the station's simulated observations so far on its local day (simulated time). */
export function createSimWeather(opts: {
  seed: string;
  simClock: Pick<SimClock, 'now'> & Partial<Pick<SimClock, 'realAt'>>;
}): WeatherSource {
  return {
    name: 'sim',
    channel: 'sim',
    ...(opts.simClock.realAt ? { reportedAtReal: opts.simClock.realAt } : {}),
    observe: async (requests) => {
      const now = opts.simClock.now();
      const out = new Map<string, Observation[] | Error>();
      for (const { city, date } of requests)
        out.set(city.slug, simObservations(opts.seed, { city, date, untilMs: now }));
      return out;
    },
  };
}
