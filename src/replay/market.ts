import { z } from 'zod';
import type { CityRecord } from '../cities/catalog.ts';
import { orderBuckets, parseLabel, type BucketRange } from '../buckets/labels.ts';
import { UpstreamError } from '../lib/errors.ts';
import { eventSlugs } from '../cities/market-slug.ts';
import { fetchGammaEventJson, parseGammaEvent } from '../sources/market/gamma.ts';
import type { ResolutionRule } from '../sources/market/resolution-rule.ts';
import { ReplayInputError } from './errors.ts';
import type { ReplayUpstreams } from './observations.ts';

/** Parsed with the live Gamma or label parser, so exactly the shapes the poller accepts. */
export type ReplayMarket = {
  origin: 'file' | 'labels' | 'gamma';
  slug: string | null;
  url: string | null;
  buckets: BucketRange[];
  /** The bucket whose YES paid out (`outcomePrices` 1 for Yes); null while unresolved or unknown. */
  resolvedBucket: string | null;
  rule: ResolutionRule | null;
};

/** Labels hold no commas, so a plain split is enough. */
export function marketFromLabels(list: string): ReplayMarket {
  const labels = list
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (labels.length === 0) throw new ReplayInputError('--buckets needs at least one label');
  const ranges = labels.map((label) => {
    const r = parseLabel(label);
    if (r) return r;
    throw new ReplayInputError(
      `--buckets: ${JSON.stringify(label)} is not a bucket label (like 40-41°F, 14°C, 27°F or below, 38°F or higher)`,
    );
  });
  const ordered = orderBuckets(ranges);
  if (!ordered.ok) throw new ReplayInputError(`--buckets: ${ordered.reason}`);
  return { origin: 'labels', slug: null, url: null, buckets: ordered.buckets, resolvedBucket: null, rule: null };
}

/** A Gamma event as saved from `/events?slug=` (the array the API returns, or one event of it). */
export function marketFromEventJson(json: unknown, origin: 'file' | 'gamma' = 'file'): ReplayMarket {
  let raw = json;
  if (Array.isArray(json)) {
    if (json.length !== 1) throw new ReplayInputError(`market file holds ${json.length} events; save exactly one`);
    raw = json[0];
  }
  try {
    const event = parseGammaEvent(raw);
    return {
      origin,
      slug: event.slug,
      url: event.url,
      buckets: event.buckets,
      resolvedBucket: resolvedBucket(raw),
      rule: event.rule,
    };
  } catch (err) {
    if (err instanceof UpstreamError && origin === 'file') throw new ReplayInputError(`market file: ${err.message}`);
    throw err;
  }
}

const jsonStrings = z.union([
  z.array(z.string()),
  z.string().transform((s) => {
    try {
      const v: unknown = JSON.parse(s);
      return Array.isArray(v) ? v.map(String) : [];
    } catch {
      return [];
    }
  }),
]);
const Resolution = z.object({
  markets: z.array(
    z.looseObject({
      groupItemTitle: z.string(),
      outcomes: jsonStrings.optional(),
      outcomePrices: jsonStrings.optional(),
    }),
  ),
});

/** Exactly one Yes price of exactly 1 (`["1", "0"]`); a lopsided live price (`"0.9995"`) is not a resolution. */
function resolvedBucket(raw: unknown): string | null {
  const parsed = Resolution.safeParse(raw);
  if (!parsed.success) return null;
  const winners = parsed.data.markets.filter((m) => {
    const yesAt = Math.max(
      0,
      (m.outcomes ?? ['Yes']).findIndex((o) => o.toLowerCase() === 'yes'),
    );
    const price = m.outcomePrices?.[yesAt];
    return price !== undefined && Number(price) === 1;
  });
  return winners.length === 1 ? winners[0]!.groupItemTitle : null;
}

/** Whether the catalog station's observations are what the rule resolves on; an unreadable rule only gets a note. */
export function stationCheck(rule: ResolutionRule | null, city: CityRecord) {
  const refuse = (why: string | null) => ({ refuse: why, note: null });
  if (rule?.source === 'unknown')
    return {
      refuse: null,
      note: `the event's rule could not be read (${rule.reason ?? 'unknown wording'}); the station was not checked`,
    };
  // The Hong Kong row watches the Observatory itself: its readings are what the rule resolves on.
  if (!rule || (rule.source === 'hko' && city.resolutionSource === 'hko')) return refuse(null);
  if (rule.source === 'hko' || rule.source === 'cwa')
    return refuse(
      `the event resolves on ${rule.source} (${rule.station}), not on ${city.slug}'s station ${city.station ?? '(none)'}`,
    );
  if (rule.station !== city.station?.toUpperCase())
    return refuse(
      `the event's rule resolves on station ${rule.station}, but the observations are ${city.slug}'s catalog station ${city.station ?? '(none)'}`,
    );
  return refuse(null);
}

/** Both slug forms (with the year first), then again with `closed=true`: Gamma has not always returned closed events. */
export async function fetchReplayMarket(up: ReplayUpstreams, city: CityRecord, date: string): Promise<ReplayMarket> {
  const gamma = { baseUrl: up.gammaUrl, timeoutMs: up.timeoutMs ?? 8_000 };
  const { withYear, withoutYear } = eventSlugs(city.marketToken, date, city.kind);
  for (const filters of ['', 'closed=true']) {
    for (const slug of [withYear, withoutYear]) {
      const raw = await fetchGammaEventJson(gamma, slug, filters);
      if (raw !== null) return marketFromEventJson(raw, 'gamma');
    }
  }
  throw new ReplayInputError(
    `Gamma has no daily-high event for ${city.slug} on ${date}; pass --market <file> or --buckets "<labels>"`,
  );
}
