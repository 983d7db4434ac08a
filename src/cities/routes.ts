import { Hono } from 'hono';
import { type AppEnv, parseQuery, replyJson, replyJsonBytes, closeWithDisclaimer } from '../lib/http.ts';
import { unknownCity, ERRORS } from '../lib/api-errors.ts';
import type { Clock } from '../lib/clock.ts';
import { type RouteDoc, routeDoc } from '../lib/route-doc.ts';
import { ErrorBody } from '../lib/schemas.ts';
import { kindOf, type Catalog, type CityRecord } from './catalog.ts';
import { localDate } from '../lib/local-day.ts';
import { eventSlugs, eventUrl } from './market-slug.ts';
import { DEFAULT_KIND, KIND_RULES, type RuleKind } from '../buckets/daily-high.ts';
import type { DayRule } from '../resolution/store.ts';
import type { SignalReader } from '../signals/read-store.ts';
import { icaoOf } from '../resolution/judge.ts';
import { CityDetail, CityList, CityListQuery, CityParams, type MarketResolutionBody } from './schemas.ts';

/** The market-day clock and the poller's two lookups are AppDeps' (app.ts says what each is). */
type CitiesDeps = Pick<SignalReader, 'latestSeqAll' | 'latestAtAll' | 'latestSeq'> & {
  catalog: Catalog;
  clock: Clock;
  dayClock: Clock;
  marketUrlFor?(city: CityRecord, date: string): string | null;
  ruleFor?(city: CityRecord): DayRule | null;
};

const CITY_CACHE_MS = 30_000;

/** `resolutionSource` and `station` are the current day's own rule's once read, the catalog's until then. */
function cityPublic(city: CityRecord, latestSeq: number, rule: DayRule | null = null) {
  return {
    slug: city.slug,
    displayName: city.displayName,
    country: city.country,
    unit: city.unit,
    bucketWidth: city.bucketWidth,
    timezone: city.timezone,
    resolutionSource: rule?.source ?? city.resolutionSource,
    station: rule ? icaoOf(rule.station) : city.station,
    latestSeq,
    kind: kindOf(city),
  };
}

/** The stored day rule as published: its columns keep their order (targetDate ... status), `reason` named pausedReason. */
function resolutionPublic(rule: DayRule | null) {
  if (!rule) return null;
  const { city: _city, kind: _kind, reason, observedWith, ...stored } = rule;
  return { ...stored, pausedReason: reason, observedWith };
}

/**
 * What a market resolves on, from the day's own rule once read (`market-rule`), the catalog's until
 * then: without a rule the observatories (hko, cwa) floor tenths; the rest is Weather Underground's table.
 */
function marketResolution(city: CityRecord, rule: DayRule | null): MarketResolutionBody {
  const source = city.resolutionSource;
  const kind: RuleKind = rule?.kind ?? (source === 'hko' || source === 'cwa' ? source : DEFAULT_KIND);
  return {
    station: rule ? icaoOf(rule.station) : city.station,
    unit: rule?.unit ?? city.unit,
    ruleKind: kind,
    rounding: KIND_RULES[kind].rounding,
    roundingRule: KIND_RULES[kind].describe,
    resolutionSource: rule?.source ?? city.resolutionSource,
    resolutionUrl: rule?.url ?? city.stationPage,
    bucketWidth: city.bucketWidth,
    from: rule ? 'market-rule' : 'catalog',
  };
}

/** A served city's resolution metadata by slug, for the purchase's answer (paywall/routes.ts). */
export function resolutionFor(catalog: Catalog, ruleFor?: (city: CityRecord) => DayRule | null) {
  return (slug: string): MarketResolutionBody | null => {
    const city = catalog.get(slug);
    return city ? marketResolution(city, ruleFor?.(city) ?? null) : null;
  };
}

export function citiesRoutes(deps: CitiesDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  // The same for every caller: encoded at most once per 30 s (spec 8), per order; a newly served city rebuilds it.
  const caches = new Map<string, { at: number; bytes: Buffer; served: readonly unknown[] }>();

  app.get('/v1/cities', (c) => {
    const now = deps.clock.now();
    const { sort, kind } = c.req.url.includes('?') ? parseQuery(c, CityListQuery()) : {};
    // Absent means the spec's list: daily-high cities only, so a spec client never buys a low it never asked for.
    const want = kind ?? 'high';
    const key = `${sort ?? 'catalog'}|${want}`;
    let cached = caches.get(key);
    if (!cached || now - cached.at >= CITY_CACHE_MS || now < cached.at || cached.served !== deps.catalog.active) {
      const seqs = deps.latestSeqAll();
      let active = want === 'all' ? deps.catalog.active : deps.catalog.active.filter((city) => kindOf(city) === want);
      if (sort === 'recent') {
        const at = deps.latestAtAll();
        // Stable sort: cities without a signal keep catalog order at the end.
        active = [...active].sort((a, b) => (at.get(b.slug) ?? -1) - (at.get(a.slug) ?? -1));
      }
      const cities = active.map((city) => cityPublic(city, seqs.get(city.slug) ?? 0, deps.ruleFor?.(city) ?? null));
      cached = {
        at: now,
        served: deps.catalog.active,
        bytes: Buffer.from(closeWithDisclaimer(c, JSON.stringify({ cities, count: cities.length }))),
      };
      caches.set(key, cached);
    }
    const age = Math.floor((now - cached.at) / 1000);
    return replyJsonBytes(cached.bytes, { headers: { 'cache-control': `public, max-age=${Math.max(0, 30 - age)}` } });
  });

  app.get('/v1/cities/:slug', (c) => {
    const city = deps.catalog.get(c.req.param('slug'));
    if (!city) throw unknownCity();
    const targetDate = localDate(city.timezone, deps.dayClock.now());
    const marketUrl =
      deps.marketUrlFor?.(city, targetDate) ?? eventUrl(eventSlugs(city.marketToken, targetDate, city.kind).withYear);
    const rule = deps.ruleFor?.(city) ?? null;
    return replyJson(c, {
      city: cityPublic(city, deps.latestSeq(city.slug), rule),
      targetDate,
      marketUrl,
      resolutionMetadata: marketResolution(city, rule),
      resolution: resolutionPublic(rule),
    });
  });

  return app;
}

export const citiesDocs: RouteDoc[] = [
  routeDoc('get /v1/cities', 'cities', {
    summary: 'List the active cities',
    description:
      "The served market streams with their latest signal seq: every daily-high city (kind high; the spec's 37 by default, more " +
      'when the operator serves discovered cities with CITIES) and its daily-low stream (kind low, slug <city>-low). ' +
      'Cached on the server for 30 seconds, rebuilt at once when a city starts being served. ' +
      'With `sort=recent` the streams whose latest signal is newest come first: a quick way to find where signals are flowing now. ' +
      '`kind=high` or `kind=low` lists one kind.',
    query: CityListQuery,
    responses: { 200: { description: 'Active cities', schema: CityList } },
  }),
  routeDoc('get /v1/cities/{slug}', 'cities', {
    summary: 'One city, its market day and market page',
    params: CityParams,
    responses: {
      200: { description: 'The city', schema: CityDetail },
      404: { description: ERRORS.unknown_city.message, schema: ErrorBody },
    },
  }),
];
