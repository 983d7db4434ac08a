import { randomBytes } from 'node:crypto';
import { Hono } from 'hono';
import { z } from 'zod';
import type { Db } from '../db/open.ts';
import type { Clock } from '../lib/clock.ts';
import type { AppEnv, Ctx } from '../lib/http.ts';
import { replyJson, replyJsonBytes, closeWithDisclaimer } from '../lib/http.ts';
import {
  ERRORS,
  paymentRequired,
  receiptExpired,
  receiptTokenRequired,
  sanctioned,
  tooManyWaiting,
} from '../lib/api-errors.ts';
import type { ApiError } from '../lib/errors.ts';
import type { RouteDoc } from '../lib/route-doc.ts';
import { ErrorBody, RATE_LIMITED_DOC } from '../lib/schemas.ts';
import type { SanctionsList } from '../sanctions/list.ts';
import type { EntitlementStore } from '../entitlements/store.ts';
import type { ReceiptStore } from '../entitlements/receipts.ts';
import { nextCeiling } from '../entitlements/ceiling.ts';
import { MAX_WAIT_S, parseCount, parseSince, parseWait, requireCity } from './bundle.ts';
import { createWakeLookups, directLookups, type WakeLookups } from './held-read.ts';
import type { PaymentPlane } from './plane.ts';
import { PAYMENT_ID_CONFLICT_DOC, PAYMENT_REQUIRED_DOC, paymentResponseHeaders } from './routes.ts';
import { challengeHeaders, paymentHeaderOf } from './x402-v2.ts';
import { SIWX_HEADER, SIWX_MAX_LIFETIME_SEC, siwxExtension } from './siwx.ts';
import type { SiwxSignIn } from './siwx-signin.ts';
import {
  MinSpendError,
  PaymentRequired,
  RefundQueued,
  SettlementFailed,
  SettlementPending,
  type PaymentRequiredBody,
} from './schemas.ts';
import type { SignalReader } from '../signals/read-store.ts';
import type { SignalNotifier } from '../signals/notifier.ts';
import { SignalsPage, SignalsQuery } from './schemas.ts';

/**
 * `GET /v1/signals`: the paid read. A receipt bearer or an inline X-Payment (the whole subscribe
 * flow first) names the wallet; rows with since < seq <= paidThroughSeq come back ascending, at
 * most 100, built by joining the stored JSON without re-serialising it (and cached as bytes).
 */
export const PAGE_SIZE = 100;
export const DEFAULT_CHALLENGE_COUNT = 20;
const WAITERS_RETRY_S = 2;
export const RECEIPT_HINT =
  "Authorization: Bearer <receiptToken> reads this wallet's signals; lost it? POST /v1/receipts with a wallet signature";

export function paidSignalsRoutes(deps: {
  db: Db;
  plane: PaymentPlane;
  reader: SignalReader;
  entitlements: EntitlementStore;
  receipts: ReceiptStore;
  sanctions: SanctionsList;
  isCity(slug: string): boolean;
  /** Wakes held `wait` reads when a signal commits (signals/notifier.ts). */
  notifier: SignalNotifier;
  /** Reads held at once at most (MAX_SIGNAL_WAITERS); past it a `wait` read answers 503. */
  maxWaiters: number;
  clock: Clock;
  /** Receipt token lifetime (RECEIPT_TTL_DAYS); 0: tokens never expire. */
  receiptTtlMs: number;
  /** BASE_URL: the domain and uri the declared sign-in names. */
  baseUrl: string;
  /** A `SIGN-IN-WITH-X` header to its wallet (siwx-signin.ts). */
  signIn: SiwxSignIn;
}): Hono<AppEnv> {
  /** This route's own x402 v2 extension: every 402 offers a fresh sign-in (a new nonce each). */
  const extensions = (resource: string) =>
    siwxExtension({
      baseUrl: deps.baseUrl,
      resourcePath: resource,
      nowMs: deps.clock.now(),
      nonce: randomBytes(16).toString('hex'),
    });
  const app = new Hono<AppEnv>();
  const direct = directLookups(deps);
  const shared = createWakeLookups(deps.db, deps.notifier, deps);
  // Returns a Response, not a Promise, unless an inline payment must settle (lib/fast-path.ts, item 5).
  app.get('/v1/signals', (c): Response | Promise<Response> => {
    const since = parseSince(c.req.query('since'));
    const count = parseCount(c.req.query('count'), DEFAULT_CHALLENGE_COUNT);
    const city = requireCity(c.req.query('city'), deps.isCity);
    const wait = parseWait(c.req.query('wait'));
    const resource = `/v1/signals?city=${encodeURIComponent(city)}&count=${count}`;
    // HEAD never moves money: its payment header is ignored (nothing verified, nothing settled).
    const payment = paymentHeaderOf({ method: c.req.method, header: (n) => c.req.header(n) });
    if (payment) {
      // A purchase whose new ceiling would still be at or below `since` buys nothing readable:
      // refused with the exhaustion 402 before anything is verified further or settled.
      const beforeSettle = (payer: string) => {
        // Any new ceiling is at least `count` (nextCeiling), so a cursor below it needs no lookup.
        if (since < count) return;
        const paidThrough = deps.entitlements.get(payer, city)?.paidThroughSeq ?? null;
        const latest = deps.reader.latestSeq(city);
        if (since >= nextCeiling(paidThrough, latest, count))
          throw exhausted(city, count, resource, paidThrough ?? 0, latest);
      };
      const memo = { route: 'signals', since };
      return deps.plane
        .purchase(payment, { city, count, resourcePath: resource }, { beforeSettle, memo })
        .then((purchase) => {
          // A payment this request did not move (known, coalesced, or resolved from doubt) reads
          // nothing: every field of its header, the signature included, is public once settled.
          // Its own payment identifier is not public: with it, the stored answer comes back whole.
          if (!purchase.movedHere && !purchase.replay)
            throw alreadyApplied(city, count, resource, since, purchase.paidThroughSeq, purchase.latestSeq);
          return page(
            c,
            purchase.payer,
            city,
            purchase.replay?.since ?? since,
            count,
            resource,
            {
              ...paymentResponseHeaders(purchase),
              ...(purchase.receiptToken ? { 'x-receipt-token': purchase.receiptToken } : {}),
            },
            // The purchase read both inside its own transaction: no second lookup of either.
            { paidThrough: purchase.paidThroughSeq, latest: purchase.latestSeq },
          );
        });
    }
    // The wallet that paid signs in (x402 v2 sign-in-with-x): the same read as a bearer's.
    const siwx = c.req.header(SIWX_HEADER);
    if (siwx !== undefined)
      return deps.signIn(siwx).then((wallet) =>
        // Screened again at a `wait` wake, as a bearer's token is checked again.
        read(c, wallet, () => screened(wallet), city, since, count, resource, wait),
      );
    const authorization = c.req.header('authorization');
    if (authorization === undefined)
      return challengeReply(c, deps.plane.challenge({ city, count, resourcePath: resource }), resource);
    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(authorization)?.[1];
    // An Authorization header that is not `Bearer <token>`: the caller meant to read, so say how.
    if (!bearer) throw receiptTokenRequired();
    const wallet = bearerWallet(c, bearer, city, count, resource, direct);
    if (typeof wallet !== 'string') return wallet;
    const again = (lookups: WakeLookups) => bearerWallet(c, bearer, city, count, resource, lookups);
    return read(c, wallet, again, city, since, count, resource, wait);
  });

  const screened = (wallet: string): string => {
    if (deps.sanctions.has(wallet)) throw sanctioned();
    return wallet;
  };

  /**
   * A credential's read (bearer or sign-in): the page, held first for `wait` when nothing is
   * there yet. `again`: the credential checked again at wake, with the wake's shared lookups.
   */
  function read(
    c: Ctx,
    wallet: string,
    again: (lookups: WakeLookups) => string | Response,
    city: string,
    since: number,
    count: number,
    resource: string,
    wait: number | null,
  ): Response | Promise<Response> {
    const headers = { 'cache-control': 'no-store' };
    if (wait && deps.maxWaiters > 0 && c.req.method !== 'HEAD' && nothingYet(wallet, city, since)) {
      if (deps.notifier.waiting() >= deps.maxWaiters) throw tooManyWaiting(WAITERS_RETRY_S);
      // Held until a signal past `since` commits for the city, `wait` elapses, the client leaves
      // (its waiter is freed at once) or the server stops; then answered exactly as without wait.
      // The token is checked again at wake (revoked or expired while held answers as it would now);
      // reads woken by one commit share those lookups (held-read.ts).
      return deps.notifier.wait(city, since, { ms: wait * 1000, abort: c.req.raw.signal }).then((reason) => {
        const lookups = reason === 'signal' ? shared.current() : direct;
        const now = again(lookups);
        if (typeof now !== 'string') return now;
        return page(c, now, city, since, count, resource, headers, null, lookups);
      });
    }
    return page(c, wallet, city, since, count, resource, headers, null, direct);
  }

  /**
   * The wallet a bearer token reads for, or the answer when it reads for none: expired (401),
   * unknown or revoked (the 402 challenge), sanctioned (403, thrown).
   */
  function bearerWallet(
    c: Ctx,
    bearer: string,
    city: string,
    count: number,
    resource: string,
    lookups: WakeLookups,
  ): string | Response {
    const receipt = lookups.receipt(bearer);
    if (receipt && deps.receiptTtlMs > 0 && deps.clock.now() >= receipt.createdAt + deps.receiptTtlMs)
      throw receiptExpired();
    if (!receipt)
      return challengeReply(
        c,
        deps.plane.challenge(
          { city, count, resourcePath: resource },
          { error: 'receipt token not recognised; pay to continue' },
        ),
        resource,
      );
    return screened(receipt.wallet);
  }

  /** Inside the bundle but past the latest signal: the only state a `wait` holds (exhaustion answers at once). */
  function nothingYet(wallet: string, city: string, since: number): boolean {
    const paidThrough = deps.entitlements.get(wallet, city)?.paidThroughSeq ?? 0;
    return since < paidThrough && deps.reader.latestSeq(city) <= since;
  }

  function challengeReply(c: Ctx, body: PaymentRequiredBody, resource: string): Response {
    return replyJson(c, body, { status: 402, headers: challengeHeaders(body, extensions(resource)) });
  }

  function exhausted(city: string, count: number, resource: string, paidThrough: number, latest: number): ApiError {
    const challenge = deps.plane.challenge(
      { city, count, resourcePath: resource },
      {
        error: ERRORS.exhausted.message,
        exhaustion: { paidThrough, latest },
      },
    );
    return paymentRequired('exhausted', challenge, challengeHeaders(challenge, extensions(resource)));
  }

  /**
   * A known inline payment (spec 4.4 rule 4 shape): the exhaustion 402 with `paid_through` and
   * `latest` for its wallet, `idempotent: true` (it is applied; nothing is charged again) and the
   * way to read: the bearer token, recoverable with POST /v1/receipts.
   */
  function alreadyApplied(
    city: string,
    count: number,
    resource: string,
    since: number,
    paidThrough: number,
    latest: number,
  ): ApiError {
    // A known inline X-Payment below the ceiling: the payment stands, but only a bearer token reads.
    const code = since >= paidThrough ? 'exhausted' : 'already_applied';
    const challenge = deps.plane.challenge(
      { city, count, resourcePath: resource },
      {
        error: ERRORS[code].message,
        exhaustion: { paidThrough, latest },
      },
    );
    const headers = challengeHeaders(challenge, extensions(resource));
    return paymentRequired(code, { ...challenge, idempotent: true, receipt: RECEIPT_HINT }, headers);
  }

  /** `paid`: the ceiling after the payment this request carried; such an answer is always 200 (possibly an empty page). */
  function page(
    c: Ctx,
    wallet: string,
    city: string,
    since: number,
    count: number,
    resource: string,
    headers: Record<string, string>,
    paid: { paidThrough: number; latest: number } | null,
    lookups: WakeLookups = direct,
  ): Response {
    const paidThrough = paid ? paid.paidThrough : lookups.paidThrough(wallet, city);
    const latest = paid ? paid.latest : deps.reader.latestSeq(city);
    // Exhaustion only when nothing up to the ceiling is left after `since`; a cursor at or past
    // `latest` but below `paid_through` is an empty page (the paid signals are still to come).
    if (since >= paidThrough && !paid) {
      const body = deps.plane.challenge(
        { city, count, resourcePath: resource },
        {
          error: ERRORS.exhausted.message,
          exhaustion: { paidThrough, latest },
        },
      );
      return replyJson(c, body, {
        status: 402,
        headers: { ...headers, ...challengeHeaders(body, extensions(resource)) },
      });
    }
    // Seqs are gapless from 1 to latest (invariant 1), so the page is (since, end] and `more`
    // says a readable row exists past it; the page bytes for that range are cached (immutable).
    const readable = Math.min(paidThrough, latest);
    const end = Math.max(since, Math.min(readable, since + PAGE_SIZE));
    const body = deps.reader.pageBytes(city, {
      since,
      end,
      tail: (lastSeq) =>
        closeWithDisclaimer(
          c,
          `,"next_cursor":${lastSeq},"paid_through":${paidThrough},"latest":${latest},"more":${readable > end}}`,
        ),
    });
    return replyJsonBytes(body, { headers });
  }
  return app;
}

export const paidSignalsDocs: RouteDoc[] = [
  {
    method: 'get',
    path: '/v1/signals',
    tags: ['signals'],
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
    query: SignalsQuery,
    security: [['receipt'], ['x402'], ['x402v2'], ['siwx']],
    responses: {
      200: {
        description: 'A page of signals',
        schema: SignalsPage,
        headers: {
          'X-PAYMENT-RESPONSE': 'on inline payment',
          'PAYMENT-RESPONSE': 'on inline payment: the same settle response, for x402 v2 clients',
          'X-Receipt-Token': 'on the inline payment whose settlement moved the money (issued once)',
        },
      },
      400: { description: 'since, count or wait invalid', schema: z.union([MinSpendError, ErrorBody]) },
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
          'Payment required or exhaustion (PaymentRequired, with paid_through and latest on exhaustion; also idempotent and receipt for an X-Payment already applied), or an inline-payment failure ({error, reason?}). Every challenge also carries the PAYMENT-REQUIRED header',
        schema: z.union([PaymentRequired, SettlementFailed, ErrorBody]),
        headers: {
          'PAYMENT-REQUIRED': `${PAYMENT_REQUIRED_DOC} Here it also has extensions {"sign-in-with-x": {info, supportedChains, schema}}: a fresh sign-in to sign (SIWE) and send as SIGN-IN-WITH-X.`,
        },
      },
      403: { description: 'wallet is sanctioned; payment refused', schema: ErrorBody },
      404: { description: ERRORS.unknown_city.message, schema: ErrorBody },
      409: PAYMENT_ID_CONFLICT_DOC,
      502: { description: 'entitlement update failed after payment; refund queued', schema: RefundQueued },
      503: {
        description:
          'Inline payment in doubt (`settlement pending — retry the same X-Payment; you will not be charged twice`, Retry-After), `sanctions screening unavailable`, `server shutting down; send the same request again shortly` (Retry-After), or too many `wait` reads held (Retry-After)',
        schema: z.union([SettlementPending, ErrorBody]),
      },
    },
  },
];
