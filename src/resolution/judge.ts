import { kindOf, type CityRecord } from '../cities/catalog.ts';
import type { ResolutionRule } from '../sources/market/resolution-rule.ts';

/**
 * Match or pause (pure): a city-day is signalled only when the market's own rule resolves on a
 * source the service observes, at the catalog's station, in its unit, to whole degrees; `unknown`
 * is never guessed.
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
