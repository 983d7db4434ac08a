import { Hono } from 'hono';
import { z } from 'zod';
import { replyJson, type AppEnv } from '../lib/http.ts';
import { microToUsd } from '../lib/money.ts';
import { type RouteDoc, routeDoc } from '../lib/route-doc.ts';
import { ErrorBody, RATE_LIMITED_DOC } from '../lib/schemas.ts';
import { bundlePrice } from '../../packages/isocast-client/src/pricing.ts';
import { parseCount, requireCity } from '../payments/bundle.ts';
import type { Purchase } from '../payments/ledger.ts';
import type { MarketResolutionBody } from '../cities/schemas.ts';
import { ERRORS } from '../lib/api-errors.ts';
import { PAYMENT_ID_RULE } from '../x402/payment-identifier.ts';
import { asPaymentRefusal, purchaseOf } from './refusal.ts';
import type { PaymentPlane } from '../payments/plane.ts';
import { paymentSchemas, type SubscribeResultBody } from '../payments/schemas.ts';
import { once } from '../lib/once.ts';
import { challengeHeaders, type BundleOffer } from '../payments/challenge.ts';
import { PAYMENT_RESPONSE, paymentHeaderOf, settleResponse } from '../x402/v2.ts';

/** `POST /v1/subscribe?city&count`: a 402 challenge without X-Payment, a purchase with it. */
export function subscribeRoutes(deps: {
  plane: PaymentPlane;
  isCity(slug: string): boolean;
  /** The bought market's resolution metadata (cities/resolution.ts), for the purchase's answer. */
  resolutionOf?(city: string): MarketResolutionBody | null;
}): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const challenge = (offer: BundleOffer) => {
    const body = deps.plane.challenge(offer);
    return { body, headers: challengeHeaders(body) };
  };
  app.post('/v1/subscribe', async (c) => {
    const count = parseCount(c.req.query('count'));
    const city = requireCity(c.req.query('city'), deps.isCity);
    const offer = { city, count, resourcePath: `/v1/subscribe?city=${encodeURIComponent(city)}&count=${count}` };
    const header = paymentHeaderOf({ method: c.req.method, header: (n) => c.req.header(n) });
    if (!header) {
      const { body, headers } = challenge(offer);
      return replyJson(c, body, { status: 402, headers });
    }
    const purchase = await deps.plane
      .purchase(header, offer, { memo: { route: 'subscribe' } })
      .then((o) => purchaseOf(o, { version: header.version }))
      .catch((err) => {
        throw asPaymentRefusal(err, { header, fresh: () => challenge(offer) });
      });
    const price = bundlePrice(purchase.count);
    const resolution = deps.resolutionOf?.(purchase.city) ?? null;
    const body: SubscribeResultBody = {
      ok: true,
      city: purchase.city,
      count: purchase.count,
      unitPriceUsd: microToUsd(price.unitMicro),
      amountUsd: microToUsd(price.totalMicro),
      latestSeq: purchase.latestSeq,
      paidThroughSeq: purchase.paidThroughSeq,
      ...(purchase.receiptToken ? { receiptToken: purchase.receiptToken } : {}),
      txHash: purchase.txHash,
      idempotent: purchase.idempotent,
      ...(resolution ? { resolutionMetadata: resolution } : {}),
    };
    return replyJson(c, body, { headers: paymentResponseHeaders(purchase) });
  });
  return app;
}

/** The settlement, for x402 v1 and v2 clients alike, whichever header paid. */
export function paymentResponseHeaders(p: Purchase): Record<string, string> {
  const settled = settleResponse({ transaction: p.txHash, payer: p.payer });
  return { 'x-payment-response': settled, [PAYMENT_RESPONSE]: settled, 'cache-control': 'no-store' };
}

/** What the PAYMENT-REQUIRED header holds, for the OpenAPI document. */
export const PAYMENT_REQUIRED_DOC =
  'On a challenge: base64 JSON x402 v2 PaymentRequired {x402Version: 2, error, resource {url, description, mimeType}, ' +
  'accepts [{scheme, network, amount, asset, payTo, maxTimeoutSeconds, extra {name, version, binding, mode}}]}: the same ' +
  'offer as the body. Pay it with PAYMENT-SIGNATURE, whose accepted echoes these requirements (the binding salt with them).';

/** What a payment's refusal carries beside its body (refusal.ts), for the OpenAPI document. */
export const REFUSAL_DOC =
  'a refused payment also carries the current offer (x402Version, accepts) and a fresh PAYMENT-REQUIRED; ' +
  'PAYMENT-SIGNATURE takes any 32-byte nonce (V2_NONCE=any), bound to this bundle the first time it is seen';
export const REFUSAL_RESPONSE_DOC =
  'on a refused PAYMENT-SIGNATURE: base64 JSON {success: false, errorReason (the error code), errorMessage, transaction: "", network, payer}';

/** The 402 (a challenge or a refused payment) and 503 bodies of both paid routes, built for the documents. */
export const PAID_BODIES = once(() => {
  const s = paymentSchemas();
  return {
    402: z.union([s.PaymentRequired, s.SettlementFailed, ErrorBody]),
    503: z.union([s.SettlementPending, ErrorBody]),
  };
});

/** The answers both paid routes give alike; the 409 is payment-identifier.ts's. */
export const PAID_ROUTE_DOCS = {
  403: { description: 'wallet is sanctioned; payment refused', schema: ErrorBody },
  404: { description: ERRORS.unknown_city.message, schema: ErrorBody },
  409: {
    description:
      `\`${ERRORS.payment_identifier_conflict.message}\`: an x402 v2 payment-identifier id (extensions["payment-identifier"].info.id, ${PAYMENT_ID_RULE}) ` +
      'already belongs to another payment; nothing was verified, settled or charged. The same id with the same payment answers the stored result (the same status, body and PAYMENT-RESPONSE; the receipt token included)',
    schema: ErrorBody,
  },
  502: {
    description: 'entitlement update failed after payment; refund queued',
    schema: () => paymentSchemas().RefundQueued,
  },
};

export const subscribeDocs: RouteDoc[] = [
  routeDoc('post /v1/subscribe', 'payments', {
    summary: 'Buy a bundle of signals for one city over x402',
    description:
      'Without X-Payment: 402 PaymentRequired, with extra.binding.salt to bind the nonce to (it moves after every settled purchase of the bundle and every minute; echoing it as payload.salt is optional). ' +
      'The 402 also carries PAYMENT-REQUIRED (x402 v2); PAYMENT-SIGNATURE pays like X-Payment (its accepted echoes the salt) and a settlement answers both X-PAYMENT-RESPONSE and PAYMENT-RESPONSE. ' +
      'With a payment: cheap checks (decode, payee, amount), then a known (payer, nonce) answers its state (idempotent: true, no receiptToken) whatever the clock says; ' +
      'a new one is verified, screened, bound, settled, recorded once and applied atomically. receiptToken is issued once, to the request whose settlement moved the money; ' +
      'a lost token is recovered with POST /v1/receipts. A settlement whose outcome is unknown answers 503 settlement pending: retry the same X-Payment.',
    query: () => paymentSchemas().SubscribeQuery,
    security: [['x402'], ['x402v2']],
    responses: {
      200: {
        description: 'Purchase applied (or an idempotent replay)',
        schema: () => paymentSchemas().SubscribeResult,
        headers: {
          'X-PAYMENT-RESPONSE': 'base64 JSON x402 settle response {success, transaction, network, payer}',
          'PAYMENT-RESPONSE': 'the same settle response, for x402 v2 clients',
        },
      },
      400: {
        description: 'count below 2, not an integer, above the maximum, or total below the minimum spend',
        schema: () => paymentSchemas().MinSpendError,
      },
      402: {
        description:
          'Payment required (PaymentRequired challenge, with the PAYMENT-REQUIRED header), or a verification, binding or settlement failure ' +
          `({error, reason?, x402Version, accepts}: ${REFUSAL_DOC})`,
        schema: () => PAID_BODIES()[402],
        headers: { 'PAYMENT-REQUIRED': PAYMENT_REQUIRED_DOC, 'PAYMENT-RESPONSE': REFUSAL_RESPONSE_DOC },
      },
      ...PAID_ROUTE_DOCS,
      429: RATE_LIMITED_DOC,
      503: {
        description:
          '`settlement pending — retry the same X-Payment; you will not be charged twice` with retryAfterSeconds and Retry-After (the outcome is in doubt until the token contract answers), `sanctions screening unavailable`, or `server shutting down; send the same request again shortly` (Retry-After)',
        schema: () => PAID_BODIES()[503],
      },
    },
  }),
];
