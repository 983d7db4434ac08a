import { Hono } from 'hono';
import { z } from 'zod';
import { once } from '../lib/once.ts';
import type { Hex } from 'viem';
import type { Db } from '../db/open.ts';
import type { Clock } from '../lib/clock.ts';
import {
  noPurchases,
  sanctioned,
  signatureAlreadyUsed,
  signatureVerificationFailed,
  staleTimestamp,
} from '../lib/api-errors.ts';
import { readJsonObject, replyJson, type AppEnv, type Ctx } from '../lib/http.ts';
import type { Logger } from '../lib/logger.ts';
import {
  checkSignedRequest,
  invalidSignedBody,
  requireFields,
  signedSignature,
  signedTimestamp,
  signedWallet,
  SKEW_RULE,
} from '../lib/signed-request.ts';
import { type RouteDoc, routeDoc } from '../lib/route-doc.ts';
import { Disclaimer, ErrorBody, RATE_LIMITED_DOC } from '../lib/schemas.ts';
import type { SanctionsList } from '../sanctions/list.ts';
import type { ReceiptStore } from '../entitlements/receipts.ts';
import type { EntitlementStore } from '../entitlements/store.ts';
import { createReceiptRequestStore, verifyReceiptSigned } from '../payments/receipt-request.ts';
import {
  originOf,
  RECEIPT_REQUEST_PRIMARY_TYPE,
  RECEIPT_REVOCATION_PRIMARY_TYPE,
  type ReceiptSignedKind,
} from '../../packages/isocast-client/src/receipt-typed-data.ts';
import { createPaymentReads } from '../payments/store.ts';

/** `POST /v1/receipts` and `/v1/receipts/revoke`: signatures name this origin (a lookalike's are refused), once. */

/** The shared 600 s skew would let a request signed before a revocation, dated after it, mint tokens for 10 min. */
const RECEIPT_REQUEST_MAX_AHEAD_SEC = 60;
const NO_STORE = { headers: { 'cache-control': 'no-store' } };

const signedFields = (what: string) => ({
  wallet: signedWallet().describe('The paying wallet'),
  timestamp: signedTimestamp(),
  origin: z
    .string()
    .optional()
    .describe(
      "The origin the client signed (optional: the server always verifies against its own BASE_URL origin; when given and different, the 401 names this server's origin)",
    ),
  signature: signedSignature().describe(
    `EIP-712 signature over ${what} {wallet, origin, timestamp}; must recover to wallet`,
  ),
});

const ReceiptRequestBody = once(() => z.object(signedFields('ReceiptRequest')).meta({ id: 'ReceiptRequest' }));
// Built on first use (lib/once.ts): the request body by the first request, the rest are documents only.
const ReceiptRevocationBody = once(() => z.object(signedFields('ReceiptRevocation')).meta({ id: 'ReceiptRevocation' }));
type SignedBody = z.infer<ReturnType<typeof ReceiptRequestBody>>;

const ReceiptResult = once(() =>
  z
    .object({
      ok: z.literal(true),
      wallet: z.string().describe('Lowercase wallet address'),
      receiptToken: z
        .string()
        .describe(
          'A new opaque bearer token (isocast-receipt) for GET /v1/signals; earlier tokens keep working until they expire or are revoked',
        ),
      expiresAt: z
        .string()
        .nullable()
        .describe('When the token stops reading (RECEIPT_TTL_DAYS after issue); null when tokens never expire'),
      cities: z
        .array(z.object({ city: z.string(), paidThroughSeq: z.number().int() }))
        .describe('Every city this wallet has bought, with its ceiling'),
      disclaimer: Disclaimer,
    })
    .meta({ id: 'ReceiptResult' }),
);

const RevocationResult = once(() =>
  z
    .object({
      ok: z.literal(true),
      wallet: z.string().describe('Lowercase wallet address'),
      revoked: z.number().int().describe('How many receipt tokens of this wallet stopped working'),
      disclaimer: Disclaimer,
    })
    .meta({ id: 'RevocationResult' }),
);

/** The receipt bodies' own field; wallet, timestamp and signature are every signed body's (lib/signed-request.ts). */
const MESSAGES = { origin: 'invalid origin: must be a string' };
const ORDER = ['wallet', 'timestamp', 'origin', 'signature'];

function parseBody(body: Record<string, unknown>): SignedBody {
  requireFields(body, ['wallet', 'timestamp', 'signature']);
  const parsed = ReceiptRequestBody().safeParse(body);
  if (!parsed.success)
    throw invalidSignedBody(parsed.error, { order: ORDER, messages: MESSAGES, fallback: 'invalid request body' });
  return parsed.data;
}

export function receiptRoutes(deps: {
  db: Db;
  entitlements: Pick<EntitlementStore, 'citiesOf'>;
  receipts: Pick<ReceiptStore, 'issue' | 'revokeAll'>;
  clock: Clock;
  logger: Logger;
  sanctions: SanctionsList;
  /** This deployment's BASE_URL: its origin is what every receipt signature must name. */
  baseUrl: string;
  /** Token lifetime in ms (RECEIPT_TTL_DAYS); 0: tokens never expire. */
  receiptTtlMs: number;
  limitWallet?: (wallet: string) => void;
}): Hono<AppEnv> {
  const { db, clock, entitlements, receipts } = deps;
  const origin = originOf(deps.baseUrl);
  const payments = createPaymentReads(db);
  const used = createReceiptRequestStore(db);
  /** A wallet's last revocation (unix s, later of signed and server time): a request dated no later mints nothing. */
  const revokedThrough = db
    .prepare('SELECT max(max(timestamp), max(used_at) / 1000) FROM receipt_revocations WHERE wallet = +?')
    .pluck();
  // Signature consumed and token stored in one commit: no crash burns a signature or issues a token twice.
  const issue = db.transaction(
    (i: { wallet: string; timestamp: number; paymentId: number; nowMs: number }): string | null => {
      // Inside the same transaction as the issue: a revocation commits wholly before or after it.
      const cutoff = revokedThrough.get(i.wallet) as number | null;
      if (cutoff !== null && i.timestamp <= cutoff)
        throw signatureVerificationFailed(
          `signed at or before this wallet's revocation (${new Date(cutoff * 1000).toISOString()}); sign a new ReceiptRequest`,
        );
      if (!used.consume({ kind: 'request', wallet: i.wallet, timestamp: i.timestamp, nowMs: i.nowMs })) return null;
      return receipts.issue(i.wallet, i.paymentId, i.nowMs);
    },
  );
  // Likewise: consumed and applied in one commit.
  const revoke = db.transaction((wallet: string, timestamp: number, nowMs: number): number | null => {
    if (!used.consume({ kind: 'revocation', wallet, timestamp, nowMs })) return null;
    return receipts.revokeAll(wallet);
  });

  /** The checks both endpoints share: skew, then the signature over this server's origin. */
  async function verified(body: SignedBody, kind: ReceiptSignedKind): Promise<string> {
    const wallet = body.wallet.toLowerCase();
    await checkSignedRequest({
      nowMs: clock.now(),
      timestamp: body.timestamp,
      verify: () =>
        verifyReceiptSigned({ kind, wallet, origin, timestamp: body.timestamp, signature: body.signature as Hex }),
      // The spec's string; a client that says which origin it signed learns which one this is.
      refusedFor: () =>
        body.origin !== undefined && body.origin !== origin
          ? `signed for origin ${body.origin}; this server is ${origin}`
          : undefined,
    });
    return wallet;
  }

  const app = new Hono<AppEnv>();
  app.post('/v1/receipts', async (c) => {
    const body = parseBody(await readJsonObject(c));
    if (body.timestamp - Math.floor(clock.now() / 1000) > RECEIPT_REQUEST_MAX_AHEAD_SEC) throw staleTimestamp();
    const wallet = await verified(body, RECEIPT_REQUEST_PRIMARY_TYPE);
    deps.limitWallet?.(wallet);
    if (deps.sanctions.has(wallet)) throw sanctioned();
    const owned = entitlements.citiesOf(wallet);
    const paymentId = payments.lastAppliedId(wallet);
    if (owned.length === 0 || paymentId === null) throw noPurchases();
    const nowMs = clock.now();
    const receiptToken = issue({ wallet, timestamp: body.timestamp, paymentId, nowMs });
    if (!receiptToken) throw signatureAlreadyUsed();
    deps.logger.info('receipt token issued on a signed request', { wallet, cities: owned.length });
    const expiresAt = deps.receiptTtlMs > 0 ? new Date(nowMs + deps.receiptTtlMs).toISOString() : null;
    return replyJson(c as Ctx, { ok: true, wallet, receiptToken, expiresAt, cities: owned }, NO_STORE);
  });

  app.post('/v1/receipts/revoke', async (c) => {
    const body = parseBody(await readJsonObject(c));
    const wallet = await verified(body, RECEIPT_REVOCATION_PRIMARY_TYPE);
    deps.limitWallet?.(wallet);
    // A sanctioned wallet may still revoke: it only removes access.
    const revoked = revoke(wallet, body.timestamp, clock.now());
    if (revoked === null) throw signatureAlreadyUsed();
    deps.logger.info('receipt tokens revoked on a signed request', { wallet, revoked });
    return replyJson(c as Ctx, { ok: true, wallet, revoked }, NO_STORE);
  });
  return app;
}

const BAD_BODY_DOC = {
  description: 'Missing or malformed wallet, timestamp or signature, or a body that is not a JSON object',
  schema: ErrorBody,
};

export const receiptDocs: RouteDoc[] = [
  routeDoc('post /v1/receipts', 'payments', {
    summary: 'Recover a receipt token with a wallet signature',
    description:
      'Free. A replayed X-Payment never returns a receipt token; a buyer who lost theirs (or whose token expired) signs an EIP-712 ReceiptRequest ' +
      '(domain {name: "Isocast", version: "1", chainId: 8453}, primaryType ReceiptRequest, fields wallet: address, origin: string, timestamp: uint256; ' +
      "origin is this server's origin, the scheme://host[:port] of its BASE_URL) and gets a new token reading every city the wallet bought. " +
      `A signature naming another origin is refused (401 signature verification failed). The timestamp must be ${SKEW_RULE} and at most ${RECEIPT_REQUEST_MAX_AHEAD_SEC} s ahead of it, ` +
      "and later than the wallet's last revocation (401 signature verification failed otherwise); " +
      'each signed (wallet, timestamp) works once: after "signature already used", sign a new timestamp only if you sent the first yourself.',
    body: ReceiptRequestBody,
    responses: {
      200: { description: "A new receipt token, its expiry and the wallet's ceilings", schema: ReceiptResult },
      400: BAD_BODY_DOC,
      401: {
        description:
          '`stale timestamp`, `signature verification failed` (also a signature for another origin; `reason` names this one when the body says which origin was signed), or `signature already used`',
        schema: ErrorBody,
      },
      403: { description: 'wallet is sanctioned; payment refused', schema: ErrorBody },
      404: { description: '`no purchases for this wallet`', schema: ErrorBody },
      429: RATE_LIMITED_DOC,
    },
  }),
  routeDoc('post /v1/receipts/revoke', 'payments', {
    summary: 'Revoke every receipt token of a wallet with one signature',
    description:
      'Free. The wallet signs an EIP-712 ReceiptRevocation (same domain and fields as ReceiptRequest: wallet, origin, timestamp) and every ' +
      'receipt token issued to it so far stops reading at once (a bearer then gets the 402 "receipt token not recognised"). Entitlements are ' +
      'untouched: a new token comes from POST /v1/receipts or the next purchase. Same origin, skew and once-only rules as POST /v1/receipts.',
    body: ReceiptRevocationBody,
    responses: {
      200: { description: 'How many tokens were revoked', schema: RevocationResult },
      400: BAD_BODY_DOC,
      401: {
        description:
          '`stale timestamp`, `signature verification failed` (also another origin), or `signature already used`',
        schema: ErrorBody,
      },
      429: RATE_LIMITED_DOC,
    },
  }),
];
