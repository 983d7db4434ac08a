import { z } from 'zod';
import { UpstreamError } from '../../lib/errors.ts';
import { httpJson } from '../../lib/http-client.ts';
import { orderBuckets, parseLabel } from '../../buckets/labels.ts';
import { EVENT_PREFIX, eventUrl, MONTHS } from '../../cities/market-slug.ts';
import { parseResolutionRule } from './resolution-rule.ts';
import type { MarketBucket, MarketEvent } from './types.ts';
import { parseUpstream } from '../upstream.ts';

/**
 * `outcomes` and `clobTokenIds` come as JSON-encoded strings or arrays. Anything that does not parse
 * is rejected whole: a half-read ladder would put readings in the wrong bucket.
 */
const hex32 = z.string().regex(/^0x[0-9a-fA-F]{64}$/);
const parseJson = (s: string): unknown => {
  try {
    return JSON.parse(s);
  } catch {
    return s; // not an array: refused by the pipe below
  }
};
const jsonStrings = z.union([z.array(z.string()), z.string().transform(parseJson).pipe(z.array(z.string()))]);

const GammaMarket = z.object({
  conditionId: hex32,
  groupItemTitle: z.string().min(1),
  outcomes: jsonStrings.optional(),
  clobTokenIds: jsonStrings.pipe(z.array(z.string().regex(/^\d+$/)).length(2)),
  negRiskMarketID: hex32.nullish(),
  description: z.string().nullish(),
  resolutionSource: z.string().nullish(),
});

const GammaEvent = z.object({
  id: z.union([z.string(), z.number()]),
  slug: z.string().min(1),
  negRiskMarketID: hex32.nullish(),
  // The rule text; every bucket market repeats it, and some captures carry it only there.
  description: z.string().nullish(),
  resolutionSource: z.string().nullish(),
  markets: z.array(GammaMarket).min(1),
});

type GammaOptions = { baseUrl: string; timeoutMs: number };

export function parseGammaEvent(raw: unknown): MarketEvent {
  const ev = parseUpstream(GammaEvent, raw, { upstream: 'gamma', what: 'event' });
  const buckets: MarketBucket[] = [];
  for (const m of ev.markets) {
    const range = parseLabel(m.groupItemTitle);
    if (!range)
      throw new UpstreamError('gamma', `unparseable bucket label ${JSON.stringify(m.groupItemTitle.slice(0, 40))}`);
    // Token ids follow `outcomes`; a market listing No first is read the right way round.
    const noFirst = m.outcomes?.[0]?.toLowerCase() === 'no';
    const [a, b] = m.clobTokenIds as [string, string];
    buckets.push({ ...range, conditionId: m.conditionId, yesTokenId: noFirst ? b : a, noTokenId: noFirst ? a : b });
  }
  const ordered = orderBuckets(buckets);
  if (!ordered.ok) throw new UpstreamError('gamma', `unusable ladder: ${ordered.reason}`);
  const negRisk = ev.negRiskMarketID ?? ev.markets.find((m) => m.negRiskMarketID)?.negRiskMarketID ?? null;
  const first = ev.markets[0]!;
  const rule = parseResolutionRule(ev.description || first.description, ev.resolutionSource || first.resolutionSource);
  return { slug: ev.slug, url: eventUrl(ev.slug), conditionId: negRisk, buckets: ordered.buckets, rule };
}

async function gammaEvents(opts: GammaOptions, query: string): Promise<unknown[]> {
  const body = await httpJson({ upstream: 'gamma', url: `${opts.baseUrl}/events?${query}`, timeoutMs: opts.timeoutMs });
  if (!Array.isArray(body)) throw new UpstreamError('gamma', 'events response is not an array');
  return body;
}

/**
 * The raw event object with this exact slug, or null when Gamma has none. `filters` is extra query
 * text (`closed=true`): a replay reads settled events, and their `outcomePrices`, too.
 */
export async function fetchGammaEventJson(opts: GammaOptions, slug: string, filters = ''): Promise<unknown> {
  const body = await gammaEvents(opts, `slug=${encodeURIComponent(slug)}${filters ? `&${filters}` : ''}`);
  return body.find((e) => typeof e === 'object' && e !== null && (e as { slug?: unknown }).slug === slug) ?? null;
}

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
export async function fetchDailyTemperatureEvents(opts: GammaOptions): Promise<DiscoveredEvent[]> {
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
