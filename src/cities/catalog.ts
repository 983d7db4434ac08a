import type { MarketKind, TempUnit } from '../lib/temperature.ts';
import { CITY_ROWS } from './catalog-data.ts';

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

/** The daily-low twin: its own slug, seq and receipts; the same station, unit and ladder. */
export function lowStreamOf(high: CityRecord): CityRecord {
  return {
    ...high,
    slug: high.slug + LOW_SUFFIX,
    displayName: `${high.displayName} (low)`,
    kind: 'low',
    baseSlug: high.slug,
  };
}

/**
 * Which cities are served (`CITIES`): `spec`, the spec's 37 (the rows marked `active`); `all`,
 * those plus every city discovery finds with a rule a supported source observes; or a list of
 * slugs, each served once its rule is discovered (a spec city in the list is served at once).
 */
type CitySelection = { mode: 'spec' } | { mode: 'all' } | { mode: 'list'; slugs: readonly string[] };

export type Catalog = ReturnType<typeof createCatalog>;

/** A low stream follows its city: served when the city is (CITIES names cities, not streams). */
export function createCatalog(
  rows: readonly CityRecord[] = CITY_ROWS,
  selection: CitySelection = { mode: 'spec' },
  kinds = 'high',
) {
  const listed = selection.mode === 'list' ? new Set(selection.slugs) : null;
  const wantedKinds = new Set(kinds.split(',') as MarketKind[]);
  const cityOf = (r: CityRecord) => r.baseSlug ?? r.slug;
  // The stream rows, every high first so the spec's cities keep their order. Only a daily-high row
  // has a low twin: a low row handed back (discovery re-serving a stream) is itself.
  const lows = wantedKinds.has('low') ? rows.filter((r) => kindOf(r) === 'high').map(lowStreamOf) : [];
  const streams = [...(wantedKinds.has('high') ? rows : rows.filter((r) => kindOf(r) === 'low')), ...lows];
  // The spec's cities start served (their records and slugs are the spec's); a listed one only if listed.
  let active: CityRecord[] = streams.filter((r) => r.active && (listed === null || listed.has(cityOf(r))));
  let all: CityRecord[] = [...streams];
  const bySlug = new Map(active.map((r) => [r.slug, r]));
  return {
    /** Every known row: the catalog's and any city discovery added. */
    get all(): readonly CityRecord[] {
      return all;
    },
    /** The served cities, in the order they were first served: what /v1/cities lists. */
    get active(): readonly CityRecord[] {
      return active;
    },
    selection,
    /** The stream kinds served (MARKET_KINDS). */
    kinds: [...wantedKinds] as readonly MarketKind[],
    /** Served city by slug; unserved and unknown slugs are both undefined. */
    get: (slug: string) => bySlug.get(slug),
    /** Whether the selection lets this city (a city's slug, not a `-low` stream's) be served once its rule is discovered. */
    wants: (slug: string) => selection.mode === 'all' || (listed?.has(slug) ?? bySlug.has(slug)),
    /** True when new. A discovered high brings no low twin: not every city with a high market runs a low one. */
    serve: (city: CityRecord): boolean => {
      if (!wantedKinds.has(kindOf(city)) || bySlug.has(city.slug)) return false;
      const served = { ...city, active: true };
      bySlug.set(city.slug, served);
      // New arrays: a reader holding the previous list keeps a consistent snapshot.
      active = [...active, served];
      all = all.some((r) => r.slug === city.slug)
        ? all.map((r) => (r.slug === city.slug ? served : r))
        : [...all, served];
      return true;
    },
  };
}

/** `spec`, `all` or a comma list of slugs (already validated by config.ts). */
export function citySelection(raw: string): CitySelection {
  const v = raw.trim().toLowerCase();
  if (v === 'spec' || v === 'all') return { mode: v };
  const slugs = v.split(',').map((s) => s.trim());
  return { mode: 'list', slugs: [...new Set(slugs.filter(Boolean))] };
}

/** A problem with a CITIES value, or null: every listed slug must be a known city row. */
export function citiesProblem(raw: string): string | null {
  const sel = citySelection(raw);
  if (sel.mode !== 'list') return null;
  if (sel.slugs.length === 0) return 'must be spec, all, or a comma-separated list of city slugs';
  const known = new Set(CITY_ROWS.map((r) => r.slug));
  const unknown = sel.slugs.filter((s) => !known.has(s));
  const examples = CITY_ROWS.slice(0, 3).map((r) => r.slug);
  return unknown.length === 0
    ? null
    : `unknown city ${unknown.join(', ')} (known: spec, all, or slugs such as ${examples.join(', ')}; \`isocast help config\`)`;
}

/** weather.com location id: `KLGA:9:US`. */
export function wuLocationId(city: CityRecord): string | null {
  return city.station && city.country ? `${city.station}:9:${city.country}` : null;
}
