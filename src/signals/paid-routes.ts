import { Hono } from 'hono';
import { z } from 'zod';
import type { Db } from '../db/open.ts';
import type { AppEnv, Ctx } from '../lib/http.ts';
import { reply, replyBytes, withDisclaimer } from '../lib/http.ts';
import { ApiError } from '../lib/errors.ts';
import type { RouteDoc } from '../lib/route-doc.ts';
import { Disclaimer, ErrorBody, RATE_LIMITED_DOC } from '../lib/schemas.ts';
import type { SanctionsList } from '../sanctions/list.ts';
import { entitlementOf } from '../entitlements/store.ts';
import { walletForReceipt } from '../entitlements/receipts.ts';
import { parseCount, parseSince, requireCity } from '../payments/bundle.ts';
import { PAYMENT_ERRORS } from '../payments/errors.ts';
import type { PaymentPlane } from '../payments/plane.ts';
import { paymentResponseHeaders } from '../payments/routes.ts';
import { MinSpendError, PaymentRequired, SettlementFailed } from '../payments/schemas.ts';
import type { SignalReader } from './read-store.ts';
import { IsocastSignalPublic } from './schemas.ts';

/**
 * `GET /v1/signals`: the paid read. A receipt bearer or an inline X-Payment (the whole subscribe
 * flow first) names the wallet; rows with since < seq <= paidThroughSeq come back ascending, at
 * most 100, built by joining the stored JSON without re-serialising it (and cached as bytes).
 */
export const PAGE_SIZE = 100;
export const DEFAULT_CHALLENGE_COUNT = 20;

export function paidSignalsRoutes(deps: { db: Db; plane: PaymentPlane; reader: SignalReader; sanctions: SanctionsList; isCity(slug: string): boolean }): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  // Synchronous unless an inline payment must settle first: a handler that returns a Response
  // (not a Promise) lets the node adapter write it without awaiting, the bearer read's hot path.
  app.get('/v1/signals', (c): Response | Promise<Response> => {
    const since = parseSince(c.req.query('since'));
    const count = parseCount(c.req.query('count'), DEFAULT_CHALLENGE_COUNT);
    const city = requireCity(c.req.query('city'), deps.isCity);
    const resource = `/v1/signals?city=${encodeURIComponent(city)}&count=${count}`;
    const payment = c.req.header('x-payment');
    if (payment) {
      return deps.plane.purchase(payment, city, count, resource).then((purchase) => page(c, purchase.payer, city, since, count, resource, {
        ...paymentResponseHeaders(purchase), ...(purchase.receiptToken ? { 'x-receipt-token': purchase.receiptToken } : {}),
      }));
    }
    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(c.req.header('authorization') ?? '')?.[1];
    if (!bearer) return reply(c, deps.plane.challenge(city, count, resource), 402);
    const wallet = walletForReceipt(deps.db, bearer);
    if (!wallet) return reply(c, deps.plane.challenge(city, count, resource, { error: 'receipt token not recognised; pay to continue' }), 402);
    if (deps.sanctions.has(wallet)) throw new ApiError(403, PAYMENT_ERRORS.sanctioned);
    return page(c, wallet, city, since, count, resource, { 'cache-control': 'no-store' });
  });

  function page(c: Ctx, wallet: string, city: string, since: number, count: number, resource: string, headers: Record<string, string>): Response {
    const paidThrough = entitlementOf(deps.db, wallet, city)?.paidThroughSeq ?? 0;
    const latest = deps.reader.latestSeq(city);
    if (since >= paidThrough) {
      const body = deps.plane.challenge(city, count, resource, { error: 'paid signals exhausted; buy more to continue', exhaustion: { paidThrough, latest } });
      return reply(c, body, 402, headers);
    }
    // Seqs are gapless from 1 to latest (invariant 1), so the page is (since, end] and `more`
    // says a readable row exists past it; the page bytes for that range are cached (immutable).
    const readable = Math.min(paidThrough, latest);
    const end = Math.max(since, Math.min(readable, since + PAGE_SIZE));
    const body = deps.reader.pageBytes(city, since, end,
      (lastSeq) => withDisclaimer(c, `,"next_cursor":${lastSeq},"paid_through":${paidThrough},"latest":${latest},"more":${readable > end}}`));
    return replyBytes(body, 200, headers);
  }
  return app;
}

export const SignalsQuery = z.object({
  city: z.string().describe('City slug'),
  since: z.string().optional().describe('Cursor (integer >= 0, default 0): signals with seq strictly greater'),
  count: z.string().optional().describe('Bundle size (integer >= 2, default 20) proposed in a 402 challenge'),
});

export const SignalsPage = z.object({
  signals: z.array(IsocastSignalPublic),
  next_cursor: z.number().int(),
  paid_through: z.number().int(),
  latest: z.number().int(),
  more: z.boolean(),
  disclaimer: Disclaimer,
}).meta({ id: 'SignalsPage' });

export const paidSignalsDocs: RouteDoc[] = [{
  method: 'get', path: '/v1/signals', tags: ['signals'], summary: 'Entitled signals for one city, ascending, at most 100 per page',
  description: 'Authorization: Bearer <receipt token>, or an inline X-Payment (the subscribe flow runs first). since >= paid_through answers 402 with paid_through and latest.',
  query: SignalsQuery,
  security: [['receipt'], ['x402']],
  responses: {
    200: { description: 'A page of signals', schema: SignalsPage, headers: { 'X-PAYMENT-RESPONSE': 'on inline payment', 'X-Receipt-Token': 'on inline payment: a bearer for later reads' } },
    400: { description: 'since or count invalid', schema: MinSpendError },
    429: { ...RATE_LIMITED_DOC, description: 'inline payment only: too many from this address or wallet; retry after Retry-After seconds' },
    402: { description: 'Payment required or exhaustion (PaymentRequired, with paid_through and latest on exhaustion), or an inline-payment failure ({error, reason?})', schema: z.union([PaymentRequired, SettlementFailed, ErrorBody]) },
    403: { description: 'wallet is sanctioned; payment refused', schema: ErrorBody },
    404: { description: 'unknown city', schema: ErrorBody },
    502: { description: 'entitlement update failed after payment; refund queued', schema: ErrorBody },
    503: { description: 'sanctions screening unavailable', schema: ErrorBody },
  },
}];
