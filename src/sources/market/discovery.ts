import { EVENT_PREFIX, MONTHS } from '../../cities/market-slug.ts';
import { UpstreamError } from '../../lib/errors.ts';
import { httpJson } from '../../lib/http-client.ts';
import { parseResolutionRule, type ResolutionRule } from './resolution-rule.ts';

/**
 * The daily-high events Gamma lists, found by tag slug: `GET /events?tag_slug=highest-temperature
 * &closed=false&limit=100&offset=N`. (`tag=Weather` is not a filter Gamma applies: it answers 200
 * with an empty list, so a discovery built on it silently finds nothing.) Each event is read into
 * its city token, market day and parsed rule; what to serve is decided by
 * src/resolution/discover.ts.
 */
export const DAILY_HIGH_TAG_SLUG = 'highest-temperature';
const PAGE = 100;
/** Three days of ~60 cities fit in two pages; the cap only bounds a misbehaving upstream. */
const MAX_PAGES = 10;

export type DiscoveredEvent = {
  slug: string;
  /** City token of the slug (`highest-temperature-in-<token>-on-...`). */
  token: string;
  /** Market day, YYYY-MM-DD. */
  date: string;
  /** The city's name as the title writes it ("Highest temperature in Hong Kong on ...?"). */
  name: string;
  rule: ResolutionRule;
};

const SLUG = new RegExp(`^${EVENT_PREFIX.high}-([a-z0-9-]+?)-on-(${MONTHS.join('|')})-(\\d{1,2})(?:-(\\d{4}))?$`);

type RawEvent = {
  slug?: unknown;
  title?: unknown;
  endDate?: unknown;
  description?: unknown;
  resolutionSource?: unknown;
  markets?: { description?: unknown; resolutionSource?: unknown }[];
};

const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

/**
 * One raw Gamma event read for discovery, or null when it is not a daily-high event (another
 * slug shape). The year comes from the slug, else from `endDate` (noon UTC of the market day).
 */
export function readDiscoveredEvent(raw: unknown): DiscoveredEvent | null {
  if (typeof raw !== 'object' || raw === null) return null;
  const ev = raw as RawEvent;
  const slug = str(ev.slug);
  const m = slug ? SLUG.exec(slug) : null;
  if (!slug || !m) return null;
  const month = MONTHS.indexOf(m[2]!) + 1;
  const endYear = /^(\d{4})-/.exec(str(ev.endDate) ?? '')?.[1];
  const year = m[4] ?? endYear;
  if (!year) return null;
  const date = `${year}-${String(month).padStart(2, '0')}-${m[3]!.padStart(2, '0')}`;
  const title = str(ev.title) ?? '';
  const name = /^Highest temperature in (.+?) on /i.exec(title)?.[1] ?? m[1]!;
  const first = Array.isArray(ev.markets) ? ev.markets[0] : undefined;
  const rule = parseResolutionRule(
    str(ev.description) ?? str(first?.description),
    str(ev.resolutionSource) ?? str(first?.resolutionSource),
  );
  return { slug, token: m[1]!, date, name, rule };
}

/** Every open daily-high event Gamma lists now, read; other events under the tag are skipped. */
export async function fetchDailyHighEvents(opts: { baseUrl: string; timeoutMs: number }): Promise<DiscoveredEvent[]> {
  const out: DiscoveredEvent[] = [];
  for (let page = 0; page < MAX_PAGES; page++) {
    const body = await httpJson({
      upstream: 'gamma',
      url: `${opts.baseUrl}/events?tag_slug=${DAILY_HIGH_TAG_SLUG}&closed=false&limit=${PAGE}&offset=${page * PAGE}`,
      timeoutMs: opts.timeoutMs,
    });
    if (!Array.isArray(body)) throw new UpstreamError('gamma', 'events response is not an array');
    for (const raw of body) {
      const ev = readDiscoveredEvent(raw);
      if (ev) out.push(ev);
    }
    if (body.length < PAGE) break;
  }
  return out;
}
