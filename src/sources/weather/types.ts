import type { CityRecord } from '../../cities/catalog.ts';
import type { Observation } from '../../buckets/daily-high.ts';

/** One city's station and the city-local day wanted. */
type DayRequest = { city: CityRecord; date: string };

/** A failure affects only the cities it names: the map holds an Error for those. */
export type WeatherSource = {
  /** Written into each signal's `source`. */
  readonly name: string;
  /** The wire the readings came over, written into each signal's `channel`; absent: `name`. */
  readonly channel?: string;
  /** Least time between two asks of a feed billed per station (weather.com); absent: every tick. */
  readonly minIntervalMs?: number;
  /** The real instant of a report stamped `atMs` in simulated time; absent: `atMs` is real. */
  reportedAtReal?(atMs: number): number;
  observe(requests: readonly DayRequest[]): Promise<Map<string, Observation[] | Error>>;
};
