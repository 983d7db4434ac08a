import { randomBytes } from 'node:crypto';
import { ERRORS, paymentRequired } from '../lib/api-errors.ts';
import type { Clock } from '../lib/clock.ts';
import type { ApiError } from '../lib/errors.ts';
import { replyJson, type Ctx } from '../lib/http.ts';
import { type BundleOffer, type ChallengeNote, challengeHeaders } from '../payments/challenge.ts';
import type { PaymentPlane } from '../payments/plane.ts';
import type { FreshChallenge, Standing } from './refusal.ts';
import { siwxExtension } from '../payments/siwx.ts';

/** The paid read's 402s (spec 4.4), each with the challenge, PAYMENT-REQUIRED and a fresh sign-in (siwx.ts). */
export const RECEIPT_HINT =
  "Authorization: Bearer <receiptToken> reads this wallet's signals; lost it? POST /v1/receipts with a wallet signature";

/** The note of an exhaustion (or already-applied) 402: the wallet's ceiling and the latest seq. */
export const exhaustedNote = (code: 'exhausted' | 'already_applied', standing: Standing): ChallengeNote => ({
  error: ERRORS[code].message,
  exhaustion: { paidThrough: standing.paidThrough, latest: standing.latest },
});

export function createReadChallenges(deps: {
  plane: Pick<PaymentPlane, 'challenge'>;
  clock: Clock;
  /** BASE_URL: the domain and uri the declared sign-in names. */
  baseUrl: string;
}) {
  /** The current offer for `offer` with this route's headers: also what a refused payment is answered with. */
  const fresh = (offer: BundleOffer, note?: ChallengeNote): FreshChallenge => {
    const body = deps.plane.challenge(offer, note);
    const siwx = siwxExtension({
      baseUrl: deps.baseUrl,
      resourcePath: offer.resourcePath,
      nowMs: deps.clock.now(),
      nonce: randomBytes(16).toString('hex'),
    });
    return { body, headers: challengeHeaders(body, siwx) };
  };

  return {
    fresh,

    reply(c: Ctx, offer: BundleOffer, init: { note?: ChallengeNote; headers?: Record<string, string> } = {}): Response {
      const { body, headers } = fresh(offer, init.note);
      return replyJson(c, body, { status: 402, headers: { ...init.headers, ...headers } });
    },

    /** The exhaustion 402 as an error to throw: a cursor the ceiling leaves nothing after. */
    exhausted(offer: BundleOffer, standing: Standing): ApiError {
      const { body, headers } = fresh(offer, exhaustedNote('exhausted', standing));
      return paymentRequired('exhausted', body, headers);
    },

    /** A known inline payment (spec 4.4 rule 4): `idempotent: true`, nothing charged again, read by bearer token. */
    alreadyApplied(offer: BundleOffer & { since: number }, standing: Standing): ApiError {
      // A known inline X-Payment below the ceiling: the payment stands, but only a bearer token reads.
      const code = offer.since >= standing.paidThrough ? 'exhausted' : 'already_applied';
      const { body, headers } = fresh(offer, exhaustedNote(code, standing));
      return paymentRequired(code, { ...body, idempotent: true, receipt: RECEIPT_HINT }, headers);
    },
  };
}
