/** Known wordings: docs/resolution-rules.md. Anything else, or parts that disagree, is `unknown`: never guess a basis. */
import type { RuleKind } from '../../buckets/daily-high.ts';

type RuleSource = 'wu' | 'noaa' | 'hko' | 'cwa' | 'unknown';

export type ResolutionRule = {
  source: RuleSource;
  /** Which reports enter the day's maximum and how it is rounded (src/buckets/daily-high.ts). */
  kind: RuleKind | null;
  /** ICAO code for `wu` and `noaa`; the page URL for `hko` and `cwa`; null when unknown. */
  station: string | null;
  unit: 'C' | 'F' | null;
  /** Degrees the source measures to: 1 (whole degrees) or 0.1 (one decimal place). */
  precision: 1 | 0.1 | null;
  /** The source the rule falls back to when the primary has no data in time. */
  fallback: 'wu' | null;
  url: string | null;
  /** Null when the text says neither or both; a stream whose kind disagrees is paused (resolution/judge.ts). */
  extreme?: 'high' | 'low' | null;
  /** Why the rule is `unknown`; absent otherwise. */
  reason?: string;
};

/** "This market will resolve off of the Hourly Data provided using the "Show Hourly Data" button." */
const HOURLY_VIEW = /\bresolve off of the Hourly Data\b|\bShow Hourly Data\b/i;
const HIGHEST = /\bhighest (?:temperature|reading)\b|\bAbsolute Daily Max\b/i;
const LOWEST = /\blowest (?:temperature|reading)\b|\bAbsolute Daily Min\b/i;

const PROVIDERS: { source: Exclude<RuleSource, 'unknown'>; name: RegExp }[] = [
  { source: 'wu', name: /\b(?:Wunderground|Weather Underground)\b/i },
  { source: 'noaa', name: /\bNOAA\b/ },
  { source: 'hko', name: /\bHong Kong Observatory\b/i },
  { source: 'cwa', name: /\bCentral Weather Administration\b/i },
];

function pageStation(raw: string): { source: Exclude<RuleSource, 'unknown'>; station: string } | null {
  let u: URL;
  try {
    u = new URL(raw.trim());
  } catch {
    return null;
  }
  const host = u.hostname.toLowerCase().replace(/^www\./, '');
  if (host === 'wunderground.com') {
    const m = /^\/history\/daily\/(?:[^/]+\/)+([A-Za-z0-9]{4})\/?(?:date\/[\d-]+\/?)?$/.exec(u.pathname);
    return m ? { source: 'wu', station: m[1]!.toUpperCase() } : null;
  }
  if (host === 'weather.gov' && /^\/wrh\/timeseries\/?$/i.test(u.pathname)) {
    const site = u.searchParams.get('site') ?? u.searchParams.get('STID');
    return site && /^[A-Za-z0-9]{4}$/.test(site) ? { source: 'noaa', station: site.toUpperCase() } : null;
  }
  const page = `${u.protocol}//${u.host}${u.pathname}${u.search}`;
  if (host === 'weather.gov.hk' || host === 'hko.gov.hk') return { source: 'hko', station: page };
  if (host === 'cwa.gov.tw' || host === 'cwb.gov.tw') return { source: 'cwa', station: page };
  return null;
}

/** URLs in the text; a sentence's closing period is not part of the address. */
const urlsIn = (text: string) => [...text.matchAll(/https?:\/\/[^\s"'<>)]+/g)].map((m) => m[0].replace(/[.,;:]+$/, ''));

const unitWord = (w: string): 'C' | 'F' => (w.toLowerCase() === 'celsius' ? 'C' : 'F');

const unknown = (reason: string, url: string | null = null): ResolutionRule => ({
  source: 'unknown',
  kind: null,
  station: null,
  unit: null,
  precision: null,
  fallback: null,
  url,
  reason,
});

export function parseResolutionRule(
  description: string | null | undefined,
  resolutionSource?: string | null,
): ResolutionRule {
  const text = (description ?? '').replace(/\r\n?/g, '\n');
  const field = resolutionSource?.trim() || null;
  if (text.trim() === '') return unknown('the event has no rule text', field);

  // The one provider named as "the resolution source for this market will be information from X".
  const named = /resolution source for this market will be information from ([^,.\n]+)/i.exec(text)?.[1];
  const hits = named ? PROVIDERS.filter((p) => p.name.test(named)) : [];
  const provider = hits.length === 1 ? hits[0]!.source : null;
  if (!provider) return unknown('the rule names no resolution source this service knows', field);

  // Every page the rule names (text and field) must agree on provider and station.
  const pages = [...urlsIn(text), ...(field ? [field] : [])];
  const known = pages.map(pageStation).filter((p) => p !== null);
  const primaryPages = known.filter((p) => p.source === provider);
  if (primaryPages.length === 0)
    return unknown(`the rule names ${provider} but links no ${provider} station page`, field);
  const stations = new Set(primaryPages.map((p) => p.station));
  if (stations.size > 1)
    return unknown(`the rule names several ${provider} stations: ${[...stations].join(', ')}`, field);
  const station = primaryPages[0]!.station;
  const url = pages.find((p) => pageStation(p)?.station === station && pageStation(p)?.source === provider) ?? null;
  if (known.some((p) => p.source !== provider)) return unknown('the rule links pages of two providers', url);

  // "recorded at the X Station in degrees Celsius" / "recorded by the Hong Kong Observatory in degrees Celsius"
  const units = new Set([...text.matchAll(/\bin degrees (Celsius|Fahrenheit)\b/gi)].map((m) => unitWord(m[1]!)));
  const whole = /measures temperatures to whole degrees (Celsius|Fahrenheit)/i.exec(text);
  const tenths = /measures temperatures in (Celsius|Fahrenheit) to one decimal place/i.exec(text);
  if (whole && tenths) return unknown('the rule states two precisions', url);
  const precision = whole ? 1 : tenths ? 0.1 : null;
  const precUnit = whole ? unitWord(whole[1]!) : tenths ? unitWord(tenths[1]!) : null;
  if (precUnit) units.add(precUnit);
  if (units.size !== 1)
    return unknown(
      units.size === 0 ? 'the rule states no temperature unit' : 'the rule states two temperature units',
      url,
    );
  if (precision === null) return unknown('the rule states no precision', url);

  // "If NOAA data ... is unavailable ..., the Weather Underground Daily Observations table will be used"
  const fb = /\bif\b[^.]*\bunavailable\b[^.]*?,\s*(?:the\s+)?([^.]*?)\s+will be used as the resolution source/i.exec(
    text,
  );
  if (fb && !/\b(?:Wunderground|Weather Underground)\b/i.test(fb[1]!))
    return unknown('the rule names a fallback this service does not know', url);
  const noaaKind = HOURLY_VIEW.test(text) ? 'noaa-hourly' : 'noaa-all';
  const high = HIGHEST.test(text);
  return {
    source: provider,
    kind: provider === 'noaa' ? noaaKind : provider === 'wu' ? 'wu-table' : provider,
    station,
    unit: [...units][0]!,
    precision,
    fallback: fb ? 'wu' : null,
    url,
    extreme: high === LOWEST.test(text) ? null : high ? 'high' : 'low',
  };
}
