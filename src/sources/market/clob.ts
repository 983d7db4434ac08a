import { z } from 'zod';
import { UpstreamError } from '../../lib/errors.ts';
import { httpJson } from '../../lib/http-client.ts';
import type { BucketOdds, MarketBucket } from './types.ts';
import { parseUpstream } from '../upstream.ts';

/**
 * CLOB order books, all of an event's tokens in one `POST /books`. `yes`/`no`: the best ask of
 * that side's book; `midpoint`: the YES book's mid. Best levels are taken as max bid and min ask,
 * not by position, so a change of the list order cannot break them. A missing side falls back to
 * the complementary book (YES ask = 1 - NO best bid), then the last trade. A bucket with nothing
 * at all is `NO_QUOTE` (the widest market, flagged); only a ladder with no price anywhere fails.
 */
const num = z.union([z.string(), z.number()]).transform(Number);
const Level = z.object({ price: num.pipe(z.number().min(0).max(1)), size: num.pipe(z.number().nonnegative()) });
const Book = z.object({
  asset_id: z.string(),
  bids: z.array(Level).nullish(),
  asks: z.array(Level).nullish(),
  // "" when the market has not traded yet.
  last_trade_price: z
    .union([z.string(), z.number()])
    .transform((v) => (v === '' ? null : Number(v)))
    .pipe(z.number().min(0).max(1).nullable())
    .nullish(),
});
type Book = z.infer<typeof Book>;

type ClobOptions = { baseUrl: string; timeoutMs: number };

/** An empty book: nobody sells either side below the full dollar, nobody bids above zero. */
export const NO_QUOTE: BucketOdds = Object.freeze({ yes: 1, no: 1, midpoint: 0.5, noQuote: true as const });

const round4 = (x: number) => Math.round(x * 10_000) / 10_000;

function best(book: Book | undefined): { bid: number | null; ask: number | null; last: number | null } {
  const bids = (book?.bids ?? []).filter((l) => l.size > 0).map((l) => l.price);
  const asks = (book?.asks ?? []).filter((l) => l.size > 0).map((l) => l.price);
  return {
    bid: bids.length ? Math.max(...bids) : null,
    ask: asks.length ? Math.min(...asks) : null,
    last: book?.last_trade_price ?? null,
  };
}

export function oddsFromBooks(yesBook: Book | undefined, noBook: Book | undefined): BucketOdds | null {
  const y = best(yesBook);
  const n = best(noBook);
  const yes = y.ask ?? (n.bid !== null ? 1 - n.bid : null) ?? y.last;
  const no = n.ask ?? (y.bid !== null ? 1 - y.bid : null) ?? (y.last !== null ? 1 - y.last : null);
  let midpoint: number | null = null;
  if (y.bid !== null && y.ask !== null) midpoint = (y.bid + y.ask) / 2;
  else if (n.bid !== null && n.ask !== null) midpoint = 1 - (n.bid + n.ask) / 2;
  else midpoint = y.last ?? yes;
  if (yes === null || no === null || midpoint === null) return null;
  return { yes: round4(yes), no: round4(no), midpoint: round4(midpoint) };
}

export async function fetchOdds(opts: ClobOptions, buckets: readonly MarketBucket[]): Promise<Map<string, BucketOdds>> {
  const body = buckets.flatMap((b) => [{ token_id: b.yesTokenId }, { token_id: b.noTokenId }]);
  const raw = await httpJson({
    upstream: 'clob',
    url: `${opts.baseUrl}/books`,
    method: 'POST',
    body,
    timeoutMs: opts.timeoutMs,
  });
  const books = parseUpstream(z.array(Book), raw, { upstream: 'clob', what: 'books' });
  const byToken = new Map(books.map((b) => [b.asset_id, b]));
  const out = new Map<string, BucketOdds>();
  let priced = 0;
  for (const b of buckets) {
    const odds = oddsFromBooks(byToken.get(b.yesTokenId), byToken.get(b.noTokenId));
    if (odds) priced++;
    out.set(b.label, odds ?? NO_QUOTE);
  }
  if (priced === 0) throw new UpstreamError('clob', 'no prices for any bucket');
  return out;
}
