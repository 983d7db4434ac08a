import type { CityRecord } from '../../cities/catalog.ts';
import type { Clock } from '../../lib/clock.ts';
import { eventSlugs, eventUrl } from '../../cities/market-slug.ts';
import { dailyHighReading } from '../../buckets/daily-high.ts';
import { formatLabel, type BucketRange } from '../../buckets/labels.ts';
import { resolveReading } from '../../buckets/rounding.ts';
import type { BucketOdds } from './types.ts';
import { hashHex, simBelief, simDay, simObservations } from '../sim/model.ts';
import { parseResolutionRule } from './resolution-rule.ts';
import { ruleText, SIM_NOAA_CITIES } from './rule-text.ts';
import type { MarketBucket, MarketEvent, MarketSource } from './types.ts';

/** FEED=sim markets: the live ladder's shape around the forecast, odds from a normal belief that narrows past the peak. */
export function simLadder(city: CityRecord, forecastC: number): BucketRange[] {
  const e = resolveReading(forecastC, 'C', city.unit);
  const w = city.bucketWidth;
  const first = Math.floor(e / w) * w - 4 * w;
  const ranges: Omit<BucketRange, 'label'>[] = [{ lo: Number.NEGATIVE_INFINITY, hi: first - 1, unit: city.unit }];
  for (let i = 0; i < 9; i++) ranges.push({ lo: first + i * w, hi: first + i * w + w - 1, unit: city.unit });
  ranges.push({ lo: first + 9 * w, hi: Number.POSITIVE_INFINITY, unit: city.unit });
  return ranges.map((r) => ({ ...r, label: formatLabel(r) }));
}

/** Standard normal CDF (Abramowitz-Stegun 7.1.26, error below 1.5e-7). */
export function normalCdf(x: number): number {
  const z = Math.abs(x) / Math.SQRT2;
  const t = 1 / (1 + 0.3275911 * z);
  const erf =
    1 -
    t *
      (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))) *
      Math.exp(-z * z);
  return x >= 0 ? (1 + erf) / 2 : (1 - erf) / 2;
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;
const clamp = (x: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, x));

function priceLadder(
  buckets: readonly BucketRange[],
  belief: { mean: number; sd: number; floor: number | null; ceiling?: number | null },
): Map<string, BucketOdds> {
  const cdfAt = (x: number) =>
    x === Number.NEGATIVE_INFINITY ? 0 : x === Number.POSITIVE_INFINITY ? 1 : normalCdf((x - belief.mean) / belief.sd);
  const cutLo = belief.floor == null ? Number.NEGATIVE_INFINITY : belief.floor - 0.5;
  const cutHi = belief.ceiling == null ? Number.POSITIVE_INFINITY : belief.ceiling + 0.5;
  const mass = cdfAt(cutHi) - cdfAt(cutLo);
  const out = new Map<string, BucketOdds>();
  for (const b of buckets) {
    const lo = Math.max(b.lo - 0.5, cutLo);
    const hi = Math.min(b.hi + 0.5, cutHi);
    const p = hi <= lo ? 0 : (cdfAt(hi) - cdfAt(lo)) / Math.max(mass, 1e-9);
    // A spread around fair value inside the CLOB's 0.001..0.999 price band; near-certain
    // outcomes (dead buckets) trade at the edge with a one-tick spread.
    const mid = clamp(round3(p), 0.001, 0.999);
    const half = mid < 0.02 || mid > 0.98 ? 0.001 : 0.005;
    out.set(b.label, {
      yes: round3(clamp(mid + half, 0.001, 0.999)),
      no: round3(clamp(1 - mid + half, 0.001, 0.999)),
      midpoint: mid,
    });
  }
  return out;
}

export function createSimMarket(opts: { seed: string; simClock: Clock; real: Clock }) {
  return {
    name: 'sim',
    event: async (city, date): Promise<MarketEvent> => {
      const slug = eventSlugs(city.marketToken, date, city.kind).withYear;
      const day = simDay(opts.seed, city, date);
      const centre = city.kind === 'low' ? day.lowForecastC : day.forecastC;
      const buckets: MarketBucket[] = simLadder(city, centre).map((b) => {
        const id = hashHex(opts.seed, city.slug, date, b.label);
        return {
          ...b,
          conditionId: `0x${id}`,
          yesTokenId: BigInt(`0x${id.slice(0, 30)}`).toString(),
          noTokenId: BigInt(`0x${id.slice(30, 60)}`).toString(),
        };
      });
      // Realistic rule text through the live parser, so the demo's cities pass match-or-pause.
      const text = ruleText(city, date, {
        kind: city.resolutionSource === 'hko' ? 'hko' : SIM_NOAA_CITIES.has(city.baseSlug ?? city.slug) ? 'noaa' : 'wu',
        extreme: city.kind,
      });
      const rule = parseResolutionRule(text.description, text.resolutionSource);
      return {
        slug,
        url: eventUrl(slug),
        conditionId: `0x${hashHex(opts.seed, city.slug, date, 'neg-risk')}`,
        buckets,
        rule,
      };
    },
    odds: async (city, date, { event }) => {
      const at = opts.simClock.now();
      const obs = simObservations(opts.seed, { city, date, untilMs: at });
      const soFar = dailyHighReading(obs, {
        timezone: city.timezone,
        date,
        unit: city.unit,
        extreme: city.kind,
      });
      return {
        asOfMs: opts.real.now(),
        byLabel: priceLadder(event.buckets, simBelief(opts.seed, { city, date, atMs: at, soFar })),
      };
    },
  } satisfies MarketSource;
}
