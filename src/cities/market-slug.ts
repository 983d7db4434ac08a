/**
 * Event slugs of the daily-high markets. Two forms are live: older events have no year
 * (`highest-temperature-in-nyc-on-december-30`), newer ones end in `-YYYY`
 * (`highest-temperature-in-ankara-on-august-20-2026`). The month is spelt out, the day unpadded.
 */
const MONTHS = [
  'january',
  'february',
  'march',
  'april',
  'may',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
];

export function eventSlugs(marketToken: string, date: string): { withYear: string; withoutYear: string } {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  const withoutYear = `highest-temperature-in-${marketToken}-on-${MONTHS[m - 1]}-${d}`;
  return { withYear: `${withoutYear}-${y}`, withoutYear };
}

export const EVENT_PAGE_BASE = 'https://polymarket.com/event/';

export function eventUrl(slug: string): string {
  return EVENT_PAGE_BASE + slug;
}
