import type { CityRecord } from '../../cities/catalog.ts';
import type { Observation } from '../../buckets/daily-high.ts';

/** One city's station and the city-local day wanted. */
type DayRequest = { city: CityRecord; date: string };

/**
 * A weather source returns plain observation lists covering (at least) each requested local day;
 * the daily-high rule (src/buckets/daily-high.ts) picks the day's rows. A failure affects only the
 * cities it names: the map holds an Error for those.
 */
export type WeatherSource = {
  /** Written into each signal's `source`. */
  readonly name: string;
  /**
   * The wire the readings came over, written into each signal's `channel` (provenance):
   * `metar-api` (aviationweather.gov's data API), `wu` (weather.com), `hko`, `sim`. Absent: `name`.
   */
  readonly channel?: string;
  /**
   * Least time between two asks of this feed (a feed billed per station, weather.com); absent:
   * asked every tick.
   */
  readonly minIntervalMs?: number;
  /**
   * The real instant of a report stamped `atMs` by this source's clock; absent: `atMs` is real
   * (the simulated feed stamps reports in simulated time).
   */
  reportedAtReal?(atMs: number): number;
  observe(requests: readonly DayRequest[]): Promise<Map<string, Observation[] | Error>>;
};
