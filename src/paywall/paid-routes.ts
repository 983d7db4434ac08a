import { randomBytes } from 'node:crypto';
import { Hono } from 'hono';
import { z } from 'zod';
import { closeWithDisclaimer, replyJson, replyJsonBytes, type AppEnv, type Ctx } from '../lib/http.ts';
import type { Clock } from '../lib/clock.ts';
import { ERRORS, paymentRequired, receiptExpired, receiptTokenRequired, sanctioned } from '../lib/api-errors.ts';
import { type RouteDoc, routeDoc } from '../lib/route-doc.ts';
import { ErrorBody, RATE_LIMITED_DOC } from '../lib/schemas.ts';
import type { SanctionsList } from '../sanctions/list.ts';
import type { SignalReader } from '../signals/read-store.ts';
import { MAX_WAIT_S, parseCount, parseSince, parseWait, requireCity } from '../payments/bundle.ts';
import { challengeHeaders, type BundleOffer, type ChallengeNote } from '../payments/challenge.ts';
import { createHeldReads, type WakeLookups } from './held-read.ts';
import type { PaymentPlane } from '../payments/plane.ts';
import { asPaymentRefusal, purchaseOf, type FreshChallenge, type Standing } from './refusal.ts';
import {
  PAID_BODIES,
  PAID_ROUTE_DOCS,
  PAYMENT_REQUIRED_DOC,
  paymentResponseHeaders,
  REFUSAL_DOC,
  REFUSAL_RESPONSE_DOC,
} from './routes.ts';
import { SIWX_HEADER, SIWX_MAX_LIFETIME_SEC, siwxExtension, type SiwxSignIn } from '../payments/siwx.ts';
import { paymentHeaderOf, type PaymentHeader } from '../x402/v2.ts';
import { paymentSchemas } from '../payments/schemas.ts';

/** `GET /v1/signals`: an inline payment reads only in its own answer; a sign-in or receipt token names the payer. */
const DEFAULT_CHALLENGE_COUNT = 20;
const PAGE_SIZE = 100;

/** A read: the bundle its 402 offers, the cursor, `wait`, and who reads (checked again at a wake). */
type Read = BundleOffer & { since: number; wait: number | null; credential: { bearer: string } | { signedIn: string } };

type PaidSignalsDeps = Parameters<typeof createHeldReads>[0] & {
  plane: PaymentPlane;
  reader: SignalReader;
  sanctions: SanctionsList;
  clock: Clock;
  /** BASE_URL: the domain and uri the declared sign-in names. */
  baseUrl: string;
  isCity(slug: string): boolean;
  /** Receipt token lifetime (RECEIPT_TTL_DAYS); 0: tokens never expire. */
  receiptTtlMs: number;
  signIn: SiwxSignIn;
};

/** The note of an exhaustion (or already-applied) 402: the wallet's ceiling and the latest seq. */
const exhaustedNote = (code: 'exhausted' | 'already_applied', standing: Standing): ChallengeNote => ({
  error: ERRORS[code].message,
  exhaustion: { paidThrough: standing.paidThrough, latest: standing.latest },
});

export function paidSignalsRoutes(deps: PaidSignalsDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const held = createHeldReads(deps);
  const noStore = () => ({ 'cache-control': 'no-store' });
  /** Every 402 of the read (spec 4.4): the current offer with PAYMENT-REQUIRED and a fresh sign-in (siwx.ts). */
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
  const challenge = (
    c: Ctx,
    offer: BundleOffer,
    init: { note?: ChallengeNote; headers?: Record<string, string> } = {},
  ) => {
    const { body, headers } = fresh(offer, init.note);
    return replyJson(c, body, { status: 402, headers: { ...init.headers, ...headers } });
  };
  // Returns a Response, not a Promise, unless an inline payment must settle (lib/fast-path.ts).
  app.get('/v1/signals', (c): Response | Promise<Response> => {
    const since = parseSince(c.req.query('since'));
    const count = parseCount(c.req.query('count'), DEFAULT_CHALLENGE_COUNT);
    const city = requireCity(c.req.query('city'), deps.isCity);
    const wait = parseWait(c.req.query('wait'));
    const resourcePath = `/v1/signals?city=${encodeURIComponent(city)}&count=${count}`;
    // HEAD never moves money: its payment header is ignored (nothing verified, nothing settled).
    const payment = paymentHeaderOf({ method: c.req.method, header: (n) => c.req.header(n) });
    if (payment) return paidRead(c, payment, { city, count, resourcePath, since });
    // HEAD ignores a sign-in too: it is single-use and costs a recovery (an eth_call for a contract wallet).
    const siwx = c.req.method === 'HEAD' ? undefined : c.req.header(SIWX_HEADER);
    if (siwx !== undefined)
      return deps
        .signIn(siwx)
        .then((wallet) => read(c, { city, count, resourcePath, since, wait, credential: { signedIn: wallet } }));
    const authorization = c.req.header('authorization');
    if (authorization === undefined) return challenge(c, { city, count, resourcePath });
    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(authorization)?.[1];
    // An Authorization header that is not `Bearer <token>`: the caller meant to read, so say how.
    if (!bearer) throw receiptTokenRequired();
    return read(c, { city, count, resourcePath, since, wait, credential: { bearer } });
  });

  /** An inline payment reads only in the answer to the request whose own settlement moved the money. */
  function paidRead(c: Ctx, payment: PaymentHeader, r: BundleOffer & { since: number }): Promise<Response> {
    return (
      deps.plane
        // Refused (exhausted) by the plane before anything is settled.
        .purchase(payment, r, { readsAfter: r.since, memo: { route: 'signals', since: r.since } })
        .then((outcome) => {
          const purchase = purchaseOf(outcome, {
            version: payment.version,
            exhausted: (s) => {
              const offer = fresh(r, exhaustedNote('exhausted', s));
              return paymentRequired('exhausted', offer.body, offer.headers);
            },
          });
          const standing = { paidThrough: purchase.paidThroughSeq, latest: purchase.latestSeq };
          // A header is public once settled, so one this request did not move reads nothing; its identifier is not.
          if (!purchase.movedHere && !purchase.replay) throw alreadyApplied(r, standing);
          const headers = {
            ...paymentResponseHeaders(purchase),
            ...(purchase.receiptToken ? { 'x-receipt-token': purchase.receiptToken } : {}),
          };
          return page(c, { ...r, since: purchase.replay?.since ?? r.since }, { ...standing, headers, paid: true });
        })
        .catch((err) => {
          throw asPaymentRefusal(err, { header: payment, fresh: () => fresh(r) });
        })
    );
  }

  /** A known inline payment (spec 4.4 rule 4): `idempotent: true`, nothing charged again, read by bearer token. */
  function alreadyApplied(offer: BundleOffer & { since: number }, standing: Standing) {
    const code = offer.since >= standing.paidThrough ? 'exhausted' : 'already_applied';
    const { body, headers } = fresh(offer, exhaustedNote(code, standing));
    const receipt =
      "Authorization: Bearer <receiptToken> reads this wallet's signals; lost it? POST /v1/receipts with a wallet signature";
    return paymentRequired(code, { ...body, idempotent: true, receipt }, headers);
  }

  /** A credential's read (bearer or sign-in): the page, held first for `wait` when nothing is there yet. */
  function read(c: Ctx, r: Read): Response | Promise<Response> {
    const wallet = walletOf(c, r, held.direct);
    if (typeof wallet !== 'string') return wallet;
    if (!held.holds(c, r, wallet)) return walletPage(c, r, { wallet, lookups: held.direct });
    return held.hold(c, { ...r, wallet }, (lookups) => {
      const now = walletOf(c, r, lookups);
      return typeof now === 'string' ? walletPage(c, r, { wallet: now, lookups }) : now;
    });
  }

  function walletPage(c: Ctx, r: Read, at: { wallet: string; lookups: WakeLookups }): Response {
    const paidThrough = at.lookups.paidThrough(at.wallet, r.city);
    return page(c, r, { paidThrough, latest: deps.reader.latestSeq(r.city), headers: noStore() });
  }

  /** The credential's wallet, or 401 expired, 402 unknown or revoked, 403 sanctioned (screened again at a wake). */
  function walletOf(c: Ctx, r: Read, lookups: WakeLookups): string | Response {
    if ('signedIn' in r.credential) return screened(r.credential.signedIn);
    const receipt = lookups.receipt(r.credential.bearer);
    if (receipt && deps.receiptTtlMs > 0 && deps.clock.now() >= receipt.createdAt + deps.receiptTtlMs)
      throw receiptExpired();
    if (!receipt) return challenge(c, r, { note: { error: 'receipt token not recognised; pay to continue' } });
    return screened(receipt.wallet);
  }

  /**
   * Rows `since < seq <= min(paid_through, latest)`, at most PAGE_SIZE, or the exhaustion 402 (spec 4.4); `paid`
   * (this request's own payment) is always a 200. Hot path: stored JSON joined, never re-serialised.
   */
  function page(
    c: Ctx,
    r: BundleOffer & { since: number },
    at: Standing & { headers: Record<string, string>; paid?: boolean },
  ): Response {
    const { paidThrough, latest, headers } = at;
    // Exhaustion only at or past the ceiling; past `latest` but below `paid_through` is an empty page.
    if (r.since >= paidThrough && !at.paid) return challenge(c, r, { note: exhaustedNote('exhausted', at), headers });
    // Seqs are gapless (invariant 1), so the page is (since, end]; its bytes are cached (immutable).
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
  }

  const screened = (wallet: string): string => {
    if (deps.sanctions.has(wallet)) throw sanctioned();
    return wallet;
  };
  return app;
}

export const paidSignalsDocs: RouteDoc[] = [
  routeDoc('get /v1/signals', 'signals', {
    summary: 'Entitled signals for one city, ascending, at most 100 per page',
    description:
      'Authorization: Bearer <receipt token>, or an inline X-Payment (the subscribe flow runs first). Without either: 402 PaymentRequired. ' +
      'since >= paid_through answers 402 with paid_through and latest (exhaustion); a since at or past latest but below paid_through is a 200 empty page. ' +
      'Inline payment: if the ceiling the purchase would produce is still <= since, the exhaustion 402 comes before anything is settled. Rows are read only ' +
      'in the answer to the request whose own settlement moved the money (200, X-PAYMENT-RESPONSE, X-Receipt-Token). The same X-Payment again (or a copy ' +
      'coalesced onto it, or one resolved after a doubt) reads nothing: 402 with paid_through, latest, idempotent: true and a receipt hint (error: the exhaustion ' +
      'string when since >= paid_through); read with the bearer token, recovered with POST /v1/receipts. HEAD ignores X-Payment: it never moves money. ' +
      `wait=N (0..${MAX_WAIT_S}, an extension): a bearer read inside the bundle with nothing past since is held until an entitled signal commits or N seconds pass, ` +
      'then answered as without wait (exhaustion answers at once; an inline payment answers at once); 503 with Retry-After when too many reads are held. ' +
      'x402 v2 clients: every 402 challenge also carries PAYMENT-REQUIRED, PAYMENT-SIGNATURE pays like X-Payment, and a settlement answers PAYMENT-RESPONSE too. ' +
      "Sign in with the wallet that paid: PAYMENT-REQUIRED declares extensions['sign-in-with-x'] (SIWE, eip155:8453); a SIGN-IN-WITH-X header answering it " +
      "reads that wallet's entitled signals exactly as its bearer token would, with no token and no payment. Each (wallet, nonce) signs in once; domain and uri " +
      `must be this server's BASE_URL; expirationTime is required, at most ${SIWX_MAX_LIFETIME_SEC} s ahead. A payment header wins over it; it wins over Authorization.`,
    query: () => paymentSchemas().SignalsQuery,
    security: [['receipt'], ['x402'], ['x402v2'], ['siwx']],
    responses: {
      200: {
        description: 'A page of signals',
        schema: () => paymentSchemas().SignalsPage,
        headers: {
          'X-PAYMENT-RESPONSE': 'on inline payment',
          'PAYMENT-RESPONSE': 'on inline payment: the same settle response, for x402 v2 clients',
          'X-Receipt-Token': 'on the inline payment whose settlement moved the money (issued once)',
        },
      },
      400: {
        description: 'since, count or wait invalid',
        schema: () => z.union([paymentSchemas().MinSpendError, ErrorBody]),
      },
      401: {
        description:
          '`receipt token required: Authorization: Bearer <receiptToken>` (an Authorization header that is not a Bearer token), `receipt token expired; sign a ReceiptRequest and POST /v1/receipts for a new one (free, no payment)` (a token older than RECEIPT_TTL_DAYS), ' +
          'or a refused SIGN-IN-WITH-X (`code` names the check: `sign-in-with-x is for another server`, `sign-in-with-x expired; sign the one in a fresh 402`, ' +
          '`sign-in-with-x nonce already used; sign the one in a fresh 402`, `sign-in-with-x signature verification failed`, `stale timestamp`, ...)',
        schema: ErrorBody,
      },
      429: {
        ...RATE_LIMITED_DOC,
        description:
          'inline payment or sign-in only: too many from this address or wallet; retry after Retry-After seconds',
      },
      402: {
        description:
          'Payment required or exhaustion (PaymentRequired, with paid_through and latest on exhaustion; also idempotent and receipt for an X-Payment already applied), or an inline-payment failure ' +
          `({error, reason?, x402Version, accepts}: ${REFUSAL_DOC}). Every challenge also carries the PAYMENT-REQUIRED header`,
        schema: () => PAID_BODIES()[402],
        headers: {
          'PAYMENT-RESPONSE': REFUSAL_RESPONSE_DOC,
          'PAYMENT-REQUIRED': `${PAYMENT_REQUIRED_DOC} Here it also has extensions {"sign-in-with-x": {info, supportedChains, schema}}: a fresh sign-in to sign (SIWE) and send as SIGN-IN-WITH-X.`,
        },
      },
      ...PAID_ROUTE_DOCS,
      503: {
        description:
          'Inline payment in doubt (`settlement pending — retry the same X-Payment; you will not be charged twice`, Retry-After), `sanctions screening unavailable`, `server shutting down; send the same request again shortly` (Retry-After), or too many `wait` reads held (Retry-After)',
        schema: () => PAID_BODIES()[503],
      },
    },
  }),
];
