import type { MarketKind } from '../lib/temperature.ts';

/**
 * Event slugs: older events have no year (`highest-temperature-in-nyc-on-december-30`), newer ones
 * end in `-YYYY` (`lowest-temperature-in-nyc-on-june-4-2026`, a daily low). Days unpadded.
 */
export const MONTHS: readonly string[] =
  'january february march april may june july august september october november december'.split(' ');

export function eventSlugs(marketToken: string, date: string, kind: MarketKind = 'high') {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  const withoutYear = `${EVENT_PREFIX[kind]}-${marketToken}-on-${MONTHS[m - 1]}-${d}`;
  return { withYear: `${withoutYear}-${y}`, withoutYear };
}

/** The slug's head per kind; also how a discovered event says which kind it is. */
export const EVENT_PREFIX: Readonly<Record<MarketKind, string>> = {
  high: 'highest-temperature-in',
  low: 'lowest-temperature-in',
};

export const eventUrl = (slug: string): string => `https://polymarket.com/event/${slug}`;
