import { kindOf, LOW_SUFFIX, lowStreamOf, type Catalog, type CityRecord } from '../cities/catalog.ts';
import type { DiscoveredEvent } from '../sources/market/gamma.ts';
import type { ResolutionRule } from '../sources/market/resolution-rule.ts';

/**
 * Match or pause (pure): a city-day is signalled only when its own rule resolves on a source we
 * observe, at the catalog's station, in its unit, to whole degrees; `unknown` is never guessed.
 */
export type ObservableSource = 'wu' | 'noaa' | 'hko';

export type Verdict = { status: 'ok'; observe: ObservableSource } | { status: 'paused'; reason: string };

const LABEL: Record<Exclude<ResolutionRule['source'], 'unknown'>, string> = {
  wu: 'Weather Underground',
  noaa: 'NOAA',
  hko: 'the Hong Kong Observatory',
  cwa: "Taipei's Central Weather Administration",
};

/** The rule's station when it is an ICAO code (hko and cwa rules name a page instead). */
export const icaoOf = (station: string | null): string | null =>
  station && /^[A-Z0-9]{4}$/.test(station) ? station : null;

export function describeRule(rule: Pick<ResolutionRule, 'source' | 'station' | 'unit' | 'precision' | 'kind'>): string {
  if (rule.source === 'unknown') return 'unknown rule';
  const station = icaoOf(rule.station) ? ` ${rule.station}` : '';
  const prec = rule.precision === 0.1 ? ', 0.1°' : '';
  const view = rule.kind === 'noaa-hourly' ? ' (hourly view)' : '';
  return `${rule.source}${station}${rule.unit ? ` °${rule.unit}` : ''}${prec}${view}`;
}

export function judgeRule(
  rule: ResolutionRule,
  city: Pick<CityRecord, 'station' | 'unit' | 'kind'> & Partial<Pick<CityRecord, 'resolutionSource'>>,
  canObserve: (s: ObservableSource) => boolean,
): Verdict {
  const paused = (reason: string): Verdict => ({ status: 'paused', reason });
  if (rule.source === 'unknown') return paused(`rule not understood: ${rule.reason ?? 'unrecognised wording'}`);
  // A low stream must never signal off a high market's rule, nor the reverse.
  if (rule.extreme && rule.extreme !== kindOf(city))
    return paused(
      `rule resolves on the day's ${rule.extreme === 'low' ? 'lowest' : 'highest'} temperature, this stream watches the daily ${kindOf(city)}`,
    );
  if (rule.source === 'hko') {
    // The Observatory's own 0.1 °C readings at its headquarters: only the city that watches it.
    if (city.resolutionSource !== 'hko')
      return paused(`rule resolves on ${LABEL.hko}, the catalog watches ${city.station ?? 'no station'}`);
    if (rule.unit !== 'C') return paused(`rule resolves in °${rule.unit}, the Observatory reports °C`);
    if (!canObserve('hko')) return paused(`no weather feed configured for ${LABEL.hko} rules`);
    return { status: 'ok', observe: 'hko' };
  }
  if (rule.source === 'cwa')
    return paused(`resolves on ${LABEL.cwa} (${rule.station}), whose open data needs an API key: no feed observes it`);
  if (!city.station || rule.station !== city.station.toUpperCase())
    return paused(`rule names station ${rule.station}, the catalog watches ${city.station ?? 'no station'}`);
  if (rule.unit !== city.unit) return paused(`rule resolves in °${rule.unit}, the catalog's unit is °${city.unit}`);
  if (rule.precision !== 1) return paused(`rule resolves to ${rule.precision}°, signals are whole degrees`);
  if (!canObserve(rule.source)) return paused(`no weather feed configured for ${LABEL[rule.source]} rules`);
  return { status: 'ok', observe: rule.source };
}

/**
 * What to serve of the events discovery found (pure): a stream whose rule a feed observes, of a kind
 * MARKET_KINDS serves, that CITIES selects; an unknown token only when its station's timezone is known.
 */
export type DiscoveryVerdict = {
  slug: string;
  /** The stream's slug (the catalog's, or the token), with `-low` for a daily-low event. */
  city: string;
  date: string;
  rule: DiscoveredEvent['rule'];
  served: boolean;
  reason: string | null;
  record?: CityRecord;
};

const CWA_REASON =
  "resolves on Taipei's Central Weather Administration station page (0.1 °C); CWA's open data API needs an authorization key, so no configured feed observes it";

export function decideDiscovered(
  events: readonly DiscoveredEvent[],
  catalog: Pick<Catalog, 'all' | 'wants' | 'selection' | 'kinds'>,
  canObserve: (source: ObservableSource) => boolean,
): DiscoveryVerdict[] {
  // Tokens and stations are the cities' (their daily-high rows); a low stream is derived from its city's record.
  const highs = catalog.all.filter((r) => kindOf(r) === 'high');
  const byToken = new Map(highs.map((r) => [r.marketToken, r]));
  const stationTz = new Map(highs.filter((r) => r.station).map((r) => [r.station!, r]));
  return events.map((ev) => {
    const row = byToken.get(ev.token);
    const base = row?.slug ?? ev.token;
    const city = ev.extreme === 'low' ? base + LOW_SUFFIX : base;
    const head = { slug: ev.slug, city, date: ev.date, rule: ev.rule };
    const no = (reason: string): DiscoveryVerdict => ({ ...head, served: false, reason });
    const { rule } = ev;
    if (!catalog.kinds.includes(ev.extreme))
      return no(`a daily-${ev.extreme} market, and MARKET_KINDS=${catalog.kinds.join(',')} serves none`);
    if (rule.source === 'unknown') return no(`rule not understood: ${rule.reason ?? 'unrecognised wording'}`);
    if (rule.extreme && rule.extreme !== ev.extreme)
      return no(
        `the event is a daily-${ev.extreme} market but its rule resolves on the day's ${rule.extreme === 'low' ? 'lowest' : 'highest'} temperature`,
      );
    if (rule.source === 'cwa') return no(CWA_REASON);
    if (!canObserve(rule.source)) return no(`no configured feed observes ${rule.source} rules`);
    let record: CityRecord;
    if (rule.source === 'hko') {
      if (!row || row.resolutionSource !== 'hko')
        return no('resolves on the Hong Kong Observatory, but the city is not the catalog row watching it');
      record = row;
    } else {
      if (!rule.station || rule.unit === null) return no('rule names no station');
      if (rule.precision !== 1) return no(`rule resolves to ${rule.precision}°, signals are whole degrees`);
      const timezoneFrom = row ?? stationTz.get(rule.station);
      if (!timezoneFrom)
        return no(`no timezone known for station ${rule.station}, so its local day cannot be computed`);
      const fromRule = {
        station: rule.station,
        unit: rule.unit,
        bucketWidth: rule.unit === 'F' ? 2 : 1,
        resolutionSource: rule.source,
        stationPage: rule.url ?? timezoneFrom.stationPage,
      };
      record =
        row?.active === true
          ? row
          : row
            ? { ...row, ...fromRule }
            : {
                slug: ev.token,
                displayName: ev.name,
                country: timezoneFrom.country,
                timezone: timezoneFrom.timezone,
                marketToken: ev.token,
                active: false,
                ...fromRule,
              };
    }
    if (!catalog.wants(record.slug))
      return no(
        catalog.selection.mode === 'spec'
          ? 'observable, but CITIES=spec serves only the spec cities (CITIES=all serves it)'
          : 'observable, but not in the CITIES list',
      );
    const stream = ev.extreme === 'low' ? lowStreamOf(record) : record;
    return { slug: ev.slug, city: stream.slug, date: ev.date, rule, served: true, reason: null, record: stream };
  });
}
