import { ERRORS } from '../lib/api-errors.ts';
import { closeWithDisclaimer, replyJsonBytes, type Ctx } from '../lib/http.ts';
import type { SignalReader } from '../signals/read-store.ts';
import type { BundleOffer } from '../payments/challenge.ts';
import type { ReadChallenges, Standing } from './read-challenge.ts';

/**
 * The paid read's page (spec 4.4), apart from the credentials that reach it (paid-routes.ts):
 * what a wallet standing at (`paid_through`, `latest`) reads after `since`. Rows
 * `since < seq <= min(paid_through, latest)`, ascending, at most PAGE_SIZE, with `next_cursor`
 * and `more`; or the exhaustion 402 when the ceiling leaves nothing after `since`. This is the
 * hot path of the paid read: the page is the stored JSON joined, never re-serialised, and its
 * bytes for one range are cached (signals/read-store.ts pageBytes).
 */
const PAGE_SIZE = 100;

/** The read a page answers: the bundle its 402 would offer and the cursor. */
type PageRead = BundleOffer & { since: number };

/**
 * Where the wallet stands, and the answer's own headers. `paid`: the standing is the one the
 * payment this request carried produced (in its own transaction); such an answer is always 200,
 * possibly an empty page.
 */
type PageAt = Standing & { headers: Record<string, string>; paid?: boolean };

export function createSignalsPage(deps: { reader: SignalReader; challenges: ReadChallenges }) {
  return function page(c: Ctx, r: PageRead, at: PageAt): Response {
    const { paidThrough, latest, headers } = at;
    // Exhaustion only when nothing up to the ceiling is left after `since`; a cursor at or past
    // `latest` but below `paid_through` is an empty page (the paid signals are still to come).
    if (r.since >= paidThrough && !at.paid)
      return deps.challenges.reply(c, r, {
        note: { error: ERRORS.exhausted.message, exhaustion: { paidThrough, latest } },
        headers,
      });
    // Seqs are gapless from 1 to latest (invariant 1), so the page is (since, end] and `more`
    // says a readable row exists past it; the page bytes for that range are cached (immutable).
    const readable = Math.min(paidThrough, latest);
    const end = Math.max(r.since, Math.min(readable, r.since + PAGE_SIZE));
    const body = deps.reader.pageBytes(r.city, {
      since: r.since,
      end,
      tail: (lastSeq) =>
        closeWithDisclaimer(
          c,
          `,"next_cursor":${lastSeq},"paid_through":${paidThrough},"latest":${latest},"more":${readable > end}}`,
        ),
    });
    return replyJsonBytes(body, { headers });
  };
}
