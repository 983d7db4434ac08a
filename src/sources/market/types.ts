import type { CityRecord } from '../../cities/catalog.ts';
import type { ResolutionRule } from './resolution-rule.ts';
import type { BucketRange } from '../../buckets/labels.ts';

/** A bucket of the market's ladder as a signal names it: its range and the market's condition id. */
export type MarketBucketRef = BucketRange & { conditionId: string };
/** `noQuote`: the bucket's books were empty and it never traded (prices are then the NO_QUOTE bounds). */
export type BucketOdds = { yes: number; no: number; midpoint: number; noQuote?: true };
export type OddsSample = { asOfMs: number; byLabel: ReadonlyMap<string, BucketOdds> };

export type MarketBucket = MarketBucketRef & { yesTokenId: string; noTokenId: string };

/** One city-day market: the event page, its id and its bucket ladder (coldest first). */
export type MarketEvent = {
  slug: string;
  url: string;
  /** Neg-risk market id when the event has one; null otherwise (see docs/signal-engine.md). */
  conditionId: string | null;
  buckets: MarketBucket[];
  /** The event's own resolution rule, parsed from its text (src/sources/market/resolution-rule.ts). */
  rule: ResolutionRule;
};

export type MarketSource = {
  readonly name: string;
  /** The event for (city, local date), or null when no such market exists. */
  event(city: CityRecord, date: string): Promise<MarketEvent | null>;
  /** Live odds for every bucket of the event, sampled in one batch; `timeoutMs` shortens the source's own timeout. */
  odds(city: CityRecord, date: string, request: { event: MarketEvent; timeoutMs?: number }): Promise<OddsSample>;
};
