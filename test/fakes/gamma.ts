import { eventSlugs } from '../../src/cities/market-slug.ts';
import { CITY_ROWS } from '../../src/cities/catalog.ts';
import { ruleText } from '../../src/sources/market/rule-text.ts';

type RuleTextOptions = Parameters<typeof ruleText>[2];
import { startFakeServer, type FakeServer } from './upstream.ts';
import { createHash } from 'node:crypto';

/**
 * Gamma `/events?slug=` with the live wire shape: an array of events, each market carrying
 * `groupItemTitle`, a 0x condition id, and `outcomes` / `outcomePrices` / `clobTokenIds` as
 * JSON-encoded strings. `/events?tag_slug=highest-temperature` lists every daily-high event put and
 * `tag_slug=lowest-temperature` every daily-low one, `daily-temperature` both (`closed`, `limit`,
 * `offset` as Gamma reads them); each event carries those tags as Gamma's do. `tag=...`, a filter
 * Gamma does not apply to these events, answers an empty list, as the live API does.
 */
export type FakeGamma = FakeServer & {
  put(event: GammaEventJson): void;
  remove(slug: string): void;
};

export type GammaMarketJson = Record<string, unknown> & {
  conditionId: string;
  groupItemTitle: string;
  clobTokenIds: string;
};
export type GammaEventJson = Record<string, unknown> & { slug: string; markets: GammaMarketJson[] };

const hex = (...parts: string[]) => createHash('sha256').update(parts.join('|')).digest('hex');
/** A 77-digit decimal token id like the CLOB's, derived from a name. */
export const tokenId = (...parts: string[]) =>
  BigInt('0x' + hex('token', ...parts))
    .toString()
    .padStart(77, '1')
    .slice(0, 77);

/**
 * Builds a realistic event for (city token, date) with the given labels (coldest first). Its rule
 * text is the live wording for the catalog city of that token: Weather Underground at the catalog's
 * station unless `rule` asks for NOAA, another station or unit, or gives the text itself.
 */
export function gammaEvent(opts: {
  token: string;
  date: string;
  labels: string[];
  withYear?: boolean;
  cityName?: string;
  negRisk?: boolean;
  rule?: RuleTextOptions | { description: string; resolutionSource: string | null };
  /** A daily-low event ("Lowest temperature in ..."; slug lowest-temperature-in-...); default high. */
  kind?: 'high' | 'low';
}): GammaEventJson {
  const kind = opts.kind ?? 'high';
  const est = kind === 'low' ? 'lowest' : 'highest';
  const slugs = eventSlugs(opts.token, opts.date, kind);
  const slug = opts.withYear === false ? slugs.withoutYear : slugs.withYear;
  const name = opts.cityName ?? opts.token;
  const negRiskMarketID = opts.negRisk === false ? undefined : '0x' + hex('negrisk', slug);
  return {
    id: String(parseInt(hex(slug).slice(0, 6), 16)),
    title: `${kind === 'low' ? 'Lowest' : 'Highest'} temperature in ${name} on ${opts.date}?`,
    slug,
    ...eventRule(opts.token, opts.date, opts.rule, kind),
    startDate: `${opts.date}T00:00:00Z`,
    endDate: `${opts.date}T12:00:00Z`,
    closed: false,
    tags: eventTags(kind),
    ...(negRiskMarketID ? { negRiskMarketID } : {}),
    markets: opts.labels.map((label, i) => ({
      id: String(1_000_000 + i),
      question: `Will the ${est} temperature in ${name} be ${label} on ${opts.date}?`,
      conditionId: '0x' + hex('condition', slug, label),
      slug: `${slug}-${i}`,
      groupItemTitle: label,
      outcomes: '["Yes", "No"]',
      outcomePrices: '["0.5", "0.5"]',
      clobTokenIds: JSON.stringify([tokenId(slug, label, 'yes'), tokenId(slug, label, 'no')]),
      orderPriceMinTickSize: 0.001,
      orderMinSize: 5,
      ...(negRiskMarketID ? { negRiskMarketID } : {}),
    })),
  };
}

function eventRule(
  token: string,
  date: string,
  rule: RuleTextOptions | { description: string; resolutionSource: string | null } | undefined,
  kind: 'high' | 'low',
) {
  if (rule && 'description' in rule) return rule;
  const city = CITY_ROWS.find((c) => c.marketToken === token);
  if (!city)
    return {
      description: `This market will resolve to the temperature range that contains the highest temperature recorded at the station on ${date}.`,
      resolutionSource: '',
    };
  return ruleText(city, date, { extreme: kind, ...(rule ?? { kind: 'wu' }) });
}

/** The YES and NO token ids of one bucket of a built event. */
export function tokensOf(event: GammaEventJson, label: string): { yes: string; no: string } {
  const m = event.markets.find((x) => x.groupItemTitle === label);
  if (!m) throw new Error(`no bucket ${label}`);
  const [yes, no] = JSON.parse(m.clobTokenIds) as [string, string];
  return { yes, no };
}

/** Which event slugs each tag lists. */
const TAG_PREFIXES: Record<string, string[]> = {
  'highest-temperature': ['highest-temperature-in-'],
  'lowest-temperature': ['lowest-temperature-in-'],
  'daily-temperature': ['highest-temperature-in-', 'lowest-temperature-in-'],
};

/** The tags a daily-temperature event carries (label and slug; the live ids are not all known here). */
function eventTags(kind: 'high' | 'low') {
  return [
    kind === 'low'
      ? { label: 'Lowest temperature', slug: 'lowest-temperature' }
      : { label: 'Highest temperature', slug: 'highest-temperature' },
    { label: 'Daily Temperature', slug: 'daily-temperature' },
    { label: 'Weather', slug: 'weather' },
  ];
}

export async function startFakeGamma(): Promise<FakeGamma> {
  const events = new Map<string, GammaEventJson>();
  const server = await startFakeServer('gamma', (req) => {
    if (req.method !== 'GET' || req.path !== '/events') return { status: 404, body: { error: 'not found' } };
    const slug = req.query.get('slug');
    if (slug !== null) {
      const ev = events.get(slug);
      return { status: 200, body: ev ? [ev] : [] };
    }
    const prefixes = TAG_PREFIXES[req.query.get('tag_slug') ?? ''];
    if (prefixes) {
      const closed = req.query.get('closed');
      const limit = Number(req.query.get('limit') ?? 20);
      const offset = Number(req.query.get('offset') ?? 0);
      const list = [...events.values()].filter(
        (e) => prefixes.some((p) => e.slug.startsWith(p)) && (closed === null || String(e.closed ?? false) === closed),
      );
      return { status: 200, body: list.slice(offset, offset + limit) };
    }
    return { status: 200, body: [] };
  });
  return Object.assign(server, {
    put: (event: GammaEventJson) => {
      events.set(event.slug, event);
    },
    remove: (slug: string) => {
      events.delete(slug);
    },
  });
}
