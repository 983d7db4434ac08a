import { CITY_ROWS } from './catalog-data.ts';

export type TempUnit = 'C' | 'F';
/**
 * Which extreme of the city-local day a market resolves on: the daily high (the spec's markets)
 * or the daily low ("Lowest temperature in <city> on <date>"). Each (city, kind) is its own stream.
 */
export type MarketKind = 'high' | 'low';

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
  /** The market's extreme; absent on the catalog's rows, which are daily-high markets. */
  kind?: MarketKind;
  /** A low stream's daily-high city (`nyc` for `nyc-low`): same station, same weather. */
  baseSlug?: string;
};

/** A stream's kind: the catalog's rows are daily-high markets unless a low stream says otherwise. */
export function kindOf(city: Pick<CityRecord, 'kind'>): MarketKind {
  return city.kind ?? 'high';
}

/** Suffix of a low stream's slug: `nyc` -> `nyc-low`. */
export const LOW_SUFFIX = '-low';

/**
 * The daily-low stream of a daily-high city: its own slug, seq, entitlements and receipts, the
 * same station, unit, ladder width and rule wording ("lowest" for "highest").
 */
export function lowStreamOf(high: CityRecord): CityRecord {
  return {
    ...high,
    slug: high.slug + LOW_SUFFIX,
    displayName: `${high.displayName} (low)`,
    kind: 'low',
    baseSlug: high.slug,
  };
}

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
