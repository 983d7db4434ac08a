import { kindOf, LOW_SUFFIX, lowStreamOf, type Catalog, type CityRecord } from '../cities/catalog.ts';
import type { DiscoveredEvent } from '../sources/market/gamma.ts';
import type { ObservableSource } from './judge.ts';

/**
 * What to serve of the events discovery found (pure): a stream whose rule names a station a feed
 * observes, of a kind in MARKET_KINDS, that CITIES selects. An inferred catalog row takes the live
 * rule's station; an unknown token becomes a city only when its station's timezone is known.
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
  catalog: Pick<Catalog, 'all' | 'get' | 'wants' | 'selection' | 'kinds'>,
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
