import { EVENT_PREFIX, MONTHS } from '../../cities/market-slug.ts';
import { gammaEvents } from './gamma.ts';
import { parseResolutionRule } from './resolution-rule.ts';

/** By tag slug, not `tag=Weather`: Gamma ignores that and answers 200 with an empty list. */
const DISCOVERY_TAG_SLUGS = ['highest-temperature', 'lowest-temperature'];
const PAGE = 100;
/** Three days of ~60 cities fit in two pages per tag; the cap only bounds a misbehaving upstream. */
const MAX_PAGES = 10;

export type DiscoveredEvent = NonNullable<ReturnType<typeof readDiscoveredEvent>>;

const SLUG = new RegExp(
  `^(${EVENT_PREFIX.high}|${EVENT_PREFIX.low})-([a-z0-9-]+?)-on-(${MONTHS.join('|')})-(\\d{1,2})(?:-(\\d{4}))?$`,
);

type RawEvent = Partial<Record<string, unknown>> & { markets?: Partial<Record<string, unknown>>[] };

const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

/**
 * Null for another slug shape; the year comes from the slug, else `endDate` (noon UTC of the market
 * day). `extreme` comes from the slug's head; `name` is the city as the title writes it.
 */
export function readDiscoveredEvent(raw: unknown) {
  if (typeof raw !== 'object' || raw === null) return null;
  const ev = raw as RawEvent;
  const slug = str(ev.slug);
  const m = slug ? SLUG.exec(slug) : null;
  if (!slug || !m) return null;
  const extreme = m[1] === EVENT_PREFIX.low ? ('low' as const) : ('high' as const);
  const month = MONTHS.indexOf(m[3]!) + 1;
  const endYear = /^(\d{4})-/.exec(str(ev.endDate) ?? '')?.[1];
  const year = m[5] ?? endYear;
  if (!year) return null;
  const date = `${year}-${String(month).padStart(2, '0')}-${m[4]!.padStart(2, '0')}`;
  const title = str(ev.title) ?? '';
  const name = /^(?:Highest|Lowest) temperature in (.+?) on /i.exec(title)?.[1] ?? m[2]!;
  const first = Array.isArray(ev.markets) ? ev.markets[0] : undefined;
  const rule = parseResolutionRule(
    str(ev.description) ?? str(first?.description),
    str(ev.resolutionSource) ?? str(first?.resolutionSource),
  );
  return { slug, extreme, token: m[2]!, date, name, rule };
}

/** Either tag failing fails the run, so a run never records half the market as gone. */
export async function fetchDailyTemperatureEvents(opts: {
  baseUrl: string;
  timeoutMs: number;
}): Promise<DiscoveredEvent[]> {
  const out = new Map<string, DiscoveredEvent>();
  for (const tag of DISCOVERY_TAG_SLUGS) {
    for (let page = 0; page < MAX_PAGES; page++) {
      const body = await gammaEvents(opts, `tag_slug=${tag}&closed=false&limit=${PAGE}&offset=${page * PAGE}`);
      for (const raw of body) {
        const ev = readDiscoveredEvent(raw);
        if (ev && !out.has(ev.slug)) out.set(ev.slug, ev);
      }
      if (body.length < PAGE) break;
    }
  }
  return [...out.values()];
}
