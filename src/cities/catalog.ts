import type { MarketKind, TempUnit } from '../lib/temperature.ts';

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
 * `CITIES`: `spec`, the rows marked `active`; `all`, those plus every city discovery finds observable;
 * or a list of slugs, each served once its rule is discovered (a spec city in the list at once).
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
  // Every high first, so the spec's cities keep their order; a low row handed back (discovery) is itself.
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

/** A Weather Underground city: its page is `https://www.wunderground.com/history/daily/<place>/<station>`. */
type WuRow = readonly [
  slug: string,
  displayName: string,
  country: string,
  timezone: string,
  unit: TempUnit,
  station: string,
  place: string,
  active: boolean,
];

/**
 * Every city the market has run daily-high markets for (53 rows); `active` marks the 37 watched,
 * all with confirmed station and rule text. Inactive: Hong Kong (its 0.1 °C extract is in neither
 * weather source), Shenzhen (trackers disagree on its station), six secondary mainland-China
 * markets plus Busan and Panama City (regions already covered; holds the catalog at 37), and rows
 * with inferred or single-source stations (Istanbul, Moscow, Jinan, Taipei, Jakarta, Lagos).
 */
const ROWS: readonly (WuRow | CityRecord)[] = [
  ['nyc', 'NYC', 'US', 'America/New_York', 'F', 'KLGA', 'us/ny/new-york-city', true],
  ['chicago', 'Chicago', 'US', 'America/Chicago', 'F', 'KORD', 'us/il/chicago', true],
  ['miami', 'Miami', 'US', 'America/New_York', 'F', 'KMIA', 'us/fl/miami', true],
  ['dallas', 'Dallas', 'US', 'America/Chicago', 'F', 'KDAL', 'us/tx/dallas', true],
  ['seattle', 'Seattle', 'US', 'America/Los_Angeles', 'F', 'KSEA', 'us/wa/seatac', true],
  ['atlanta', 'Atlanta', 'US', 'America/New_York', 'F', 'KATL', 'us/ga/atlanta', true],
  ['los-angeles', 'Los Angeles', 'US', 'America/Los_Angeles', 'F', 'KLAX', 'us/ca/los-angeles', true],
  ['san-francisco', 'San Francisco', 'US', 'America/Los_Angeles', 'F', 'KSFO', 'us/ca/san-francisco', true],
  ['houston', 'Houston', 'US', 'America/Chicago', 'F', 'KHOU', 'us/tx/houston', true],
  ['austin', 'Austin', 'US', 'America/Chicago', 'F', 'KAUS', 'us/tx/austin', true],
  ['denver', 'Denver', 'US', 'America/Denver', 'F', 'KBKF', 'us/co/aurora', true],
  ['toronto', 'Toronto', 'CA', 'America/Toronto', 'C', 'CYYZ', 'ca/mississauga', true],
  ['mexico-city', 'Mexico City', 'MX', 'America/Mexico_City', 'C', 'MMMX', 'mx/mexico-city', true],
  ['panama-city', 'Panama City', 'PA', 'America/Panama', 'C', 'MPMG', 'pa/panama-city', false],
  ['buenos-aires', 'Buenos Aires', 'AR', 'America/Argentina/Buenos_Aires', 'C', 'SAEZ', 'ar/ezeiza', true],
  ['sao-paulo', 'Sao Paulo', 'BR', 'America/Sao_Paulo', 'C', 'SBGR', 'br/guarulhos', true],
  ['london', 'London', 'GB', 'Europe/London', 'C', 'EGLC', 'gb/london', true],
  ['paris', 'Paris', 'FR', 'Europe/Paris', 'C', 'LFPB', 'fr/bonneuil-en-france', true],
  ['munich', 'Munich', 'DE', 'Europe/Berlin', 'C', 'EDDM', 'de/munich', true],
  ['milan', 'Milan', 'IT', 'Europe/Rome', 'C', 'LIMC', 'it/milan', true],
  ['madrid', 'Madrid', 'ES', 'Europe/Madrid', 'C', 'LEMD', 'es/madrid', true],
  ['warsaw', 'Warsaw', 'PL', 'Europe/Warsaw', 'C', 'EPWA', 'pl/warsaw', true],
  ['amsterdam', 'Amsterdam', 'NL', 'Europe/Amsterdam', 'C', 'EHAM', 'nl/schiphol', true],
  ['helsinki', 'Helsinki', 'FI', 'Europe/Helsinki', 'C', 'EFHK', 'fi/vantaa', true],
  ['ankara', 'Ankara', 'TR', 'Europe/Istanbul', 'C', 'LTAC', 'tr/%C3%A7ubuk', true],
  ['istanbul', 'Istanbul', 'TR', 'Europe/Istanbul', 'C', 'LTFM', 'tr/arnavutk%C3%B6y', false],
  ['moscow', 'Moscow', 'RU', 'Europe/Moscow', 'C', 'UUWW', 'ru/moscow', false],
  ['tel-aviv', 'Tel Aviv', 'IL', 'Asia/Jerusalem', 'C', 'LLBG', 'il/tel-aviv', true],
  ['jeddah', 'Jeddah', 'SA', 'Asia/Riyadh', 'C', 'OEJN', 'sa/jeddah', true],
  ['cape-town', 'Cape Town', 'ZA', 'Africa/Johannesburg', 'C', 'FACT', 'za/matroosfontein', true],
  ['lucknow', 'Lucknow', 'IN', 'Asia/Kolkata', 'C', 'VILK', 'in/lucknow', true],
  ['karachi', 'Karachi', 'PK', 'Asia/Karachi', 'C', 'OPKC', 'pk/karachi', true],
  ['seoul', 'Seoul', 'KR', 'Asia/Seoul', 'C', 'RKSI', 'kr/incheon', true],
  ['busan', 'Busan', 'KR', 'Asia/Seoul', 'C', 'RKPK', 'kr/busan', false],
  ['tokyo', 'Tokyo', 'JP', 'Asia/Tokyo', 'C', 'RJTT', 'jp/tokyo', true],
  ['shanghai', 'Shanghai', 'CN', 'Asia/Shanghai', 'C', 'ZSPD', 'cn/shanghai', true],
  ['beijing', 'Beijing', 'CN', 'Asia/Shanghai', 'C', 'ZBAA', 'cn/beijing', true],
  ['shenzhen', 'Shenzhen', 'CN', 'Asia/Shanghai', 'C', 'ZGSZ', 'cn/shenzhen', false],
  ['guangzhou', 'Guangzhou', 'CN', 'Asia/Shanghai', 'C', 'ZGGG', 'cn/guangzhou', false],
  ['wuhan', 'Wuhan', 'CN', 'Asia/Shanghai', 'C', 'ZHHH', 'cn/wuhan', false],
  ['chengdu', 'Chengdu', 'CN', 'Asia/Shanghai', 'C', 'ZUUU', 'cn/chengdu', false],
  ['chongqing', 'Chongqing', 'CN', 'Asia/Shanghai', 'C', 'ZUCK', 'cn/chongqing', false],
  ['qingdao', 'Qingdao', 'CN', 'Asia/Shanghai', 'C', 'ZSQD', 'cn/qingdao', false],
  ['jinan', 'Jinan', 'CN', 'Asia/Shanghai', 'C', 'ZSJN', 'cn/jinan', false],
  ['zhengzhou', 'Zhengzhou', 'CN', 'Asia/Shanghai', 'C', 'ZHCC', 'cn/zhengzhou', false],
  {
    slug: 'hong-kong',
    displayName: 'Hong Kong',
    country: 'HK',
    unit: 'C',
    bucketWidth: 1,
    timezone: 'Asia/Hong_Kong',
    resolutionSource: 'hko',
    station: null,
    marketToken: 'hong-kong',
    stationPage: 'https://www.weather.gov.hk/en/cis/climat.htm',
    active: false,
  },
  ['taipei', 'Taipei', 'TW', 'Asia/Taipei', 'C', 'RCSS', 'tw/taipei', false],
  ['singapore', 'Singapore', 'SG', 'Asia/Singapore', 'C', 'WSSS', 'sg/singapore', true],
  ['kuala-lumpur', 'Kuala Lumpur', 'MY', 'Asia/Kuala_Lumpur', 'C', 'WMKK', 'my/sepang-district', true],
  ['manila', 'Manila', 'PH', 'Asia/Manila', 'C', 'RPLL', 'ph/manila', true],
  ['wellington', 'Wellington', 'NZ', 'Pacific/Auckland', 'C', 'NZWN', 'nz/wellington', true],
  ['jakarta', 'Jakarta', 'ID', 'Asia/Jakarta', 'C', 'WIHH', 'id/jakarta', false],
  ['lagos', 'Lagos', 'NG', 'Africa/Lagos', 'C', 'DNMM', 'ng/lagos', false],
];

export const CITY_ROWS: readonly CityRecord[] = ROWS.map((row) => ('slug' in row ? row : wuCity(row)));

/** The market token is the slug, and the ladder is 2 °F or 1 °C wide, on every Weather Underground city. */
function wuCity([slug, displayName, country, timezone, unit, station, place, active]: WuRow): CityRecord {
  return {
    slug,
    displayName,
    country,
    unit,
    bucketWidth: unit === 'F' ? 2 : 1,
    timezone,
    resolutionSource: 'wu',
    station,
    marketToken: slug,
    stationPage: `https://www.wunderground.com/history/daily/${place}/${station}`,
    active,
  };
}
