import { CITY_ROWS } from './catalog-data.ts';

export type TempUnit = 'C' | 'F';

export type CityRecord = {
  slug: string;
  displayName: string;
  country: string | null;
  unit: TempUnit;
  /** Bucket width in the city's unit: 2 °F or 1 °C. */
  bucketWidth: number;
  timezone: string;
  /** `wu` for Weather Underground stations; `hko` for the Hong Kong Observatory extract. */
  resolutionSource: string;
  /** ICAO code of the resolution station, null where the source is not a station. */
  station: string | null;
  /** City token in the market's event slug (`highest-temperature-in-<token>-on-...`). */
  marketToken: string;
  /** The resolution source page the market's rules name. */
  stationPage: string;
  active: boolean;
};

export type Catalog = {
  all: readonly CityRecord[];
  active: readonly CityRecord[];
  /** Active city by slug; inactive and unknown slugs are both undefined. */
  get(slug: string): CityRecord | undefined;
};

export function createCatalog(rows: readonly CityRecord[] = CITY_ROWS): Catalog {
  const active = rows.filter((r) => r.active);
  const bySlug = new Map(active.map((r) => [r.slug, r]));
  return { all: rows, active, get: (slug) => bySlug.get(slug) };
}

/** weather.com location id: `KLGA:9:US`. */
export function wuLocationId(city: CityRecord): string | null {
  return city.station && city.country ? `${city.station}:9:${city.country}` : null;
}
