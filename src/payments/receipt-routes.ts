import { Hono } from 'hono';
import { z } from 'zod';
import type { Hex } from 'viem';
import type { Db } from '../db/open.ts';
import type { Clock } from '../lib/clock.ts';
import { ApiError } from '../lib/errors.ts';
import type { AppEnv, Ctx } from '../lib/http.ts';
import { readJsonObject, replyJson } from '../lib/http.ts';
import type { Logger } from '../lib/logger.ts';
import type { RouteDoc } from '../lib/route-doc.ts';
import { Disclaimer, ErrorBody, RATE_LIMITED_DOC } from '../lib/schemas.ts';
import type { SanctionsList } from '../sanctions/list.ts';
import { issueReceipt } from '../entitlements/receipts.ts';
import { createEntitlementStore } from '../entitlements/store.ts';
import { PAYMENT_ERRORS } from './errors.ts';
import { verifyReceiptRequest } from './receipt-request.ts';
import { createPaymentReads } from './store.ts';

/**
 * `POST /v1/receipts`: a new receipt token for a wallet that proves itself with an EIP-712
 * ReceiptRequest signature, the only way to a token besides the purchase that moved the money.
 * Same skew rule and error strings as the delivery endpoint; each (wallet, timestamp) once.
 */
export const RECEIPT_SKEW_SEC = 600;

export const ReceiptRequestBody = z
  .object({
    wallet: z
      .string()
      .regex(/^0x[0-9a-fA-F]{40}$/)
      .describe('The paying wallet'),
    timestamp: z.number().int().nonnegative().describe('Unix seconds; within 600 s of server time'),
    signature: z
      .string()
      .regex(/^0x[0-9a-fA-F]+$/)
      .describe('EIP-712 signature over ReceiptRequest {wallet, timestamp}; must recover to wallet'),
  })
  .meta({ id: 'ReceiptRequest' });

export const ReceiptResult = z
  .object({
    ok: z.literal(true),
    wallet: z.string().describe('Lowercase wallet address'),
    receiptToken: z
      .string()
      .describe('A new opaque bearer token (isocast-receipt) for GET /v1/signals; earlier tokens keep working'),
    cities: z
      .array(z.object({ city: z.string(), paidThroughSeq: z.number().int() }))
      .describe('Every city this wallet has bought, with its ceiling'),
    disclaimer: Disclaimer,
  })
  .meta({ id: 'ReceiptResult' });

const MESSAGES: Record<string, string> = {
  wallet: 'invalid wallet: must be a 0x-prefixed 20-byte hex address',
  timestamp: 'invalid timestamp: must be an integer number of unix seconds',
  signature: 'invalid signature: must be a 0x-prefixed hex string',
};

function parseBody(body: Record<string, unknown>): z.infer<typeof ReceiptRequestBody> {
  for (const field of ['wallet', 'timestamp', 'signature'] as const) {
    if (body[field] === undefined || body[field] === null) throw new ApiError(400, `${field} is required`);
  }
  const parsed = ReceiptRequestBody.safeParse(body);
  if (!parsed.success)
    throw new ApiError(400, MESSAGES[String(parsed.error.issues[0]!.path[0])] ?? 'invalid request body');
  return parsed.data;
}

export function receiptRoutes(deps: {
  db: Db;
  clock: Clock;
  logger: Logger;
  sanctions: SanctionsList;
  limitWallet?: (wallet: string) => void;
}): Hono<AppEnv> {
  const { db, clock } = deps;
  const entitlements = createEntitlementStore(db);
  const payments = createPaymentReads(db);
  const consume = db.prepare(
    'INSERT INTO receipt_requests (wallet, timestamp, used_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING',
  );
  const prune = db.prepare('DELETE FROM receipt_requests WHERE timestamp < ?');
  // Consuming the signature and storing the new token commit together: a crash between them
  // cannot burn a signature without a token, nor issue a token twice for one signature.
  const issue = db.transaction((wallet: string, timestamp: number, paymentId: number, nowMs: number): string | null => {
    if (consume.run(wallet, timestamp, nowMs).changes !== 1) return null;
    prune.run(Math.floor(nowMs / 1000) - 2 * RECEIPT_SKEW_SEC);
    return issueReceipt(db, wallet, paymentId, nowMs);
  });

  const app = new Hono<AppEnv>();
  app.post('/v1/receipts', async (c) => {
    const body = parseBody(await readJsonObject(c));
    const nowMs = clock.now();
    if (Math.abs(Math.floor(nowMs / 1000) - body.timestamp) > RECEIPT_SKEW_SEC)
      throw new ApiError(401, 'stale timestamp');
    const wallet = body.wallet.toLowerCase();
    if (!(await verifyReceiptRequest(wallet, body.timestamp, body.signature as Hex)))
      throw new ApiError(401, 'signature verification failed');
    deps.limitWallet?.(wallet);
    if (deps.sanctions.has(wallet)) throw new ApiError(403, PAYMENT_ERRORS.sanctioned);
    const owned = entitlements.citiesOf(wallet);
    const paymentId = payments.lastAppliedId(wallet);
    if (owned.length === 0 || paymentId === null) throw new ApiError(404, 'no purchases for this wallet');
    const receiptToken = issue(wallet, body.timestamp, paymentId, clock.now());
    if (!receiptToken) throw new ApiError(401, 'signature already used');
    deps.logger.info('receipt token issued on a signed request', { wallet, cities: owned.length });
    return replyJson(c as Ctx, { ok: true, wallet, receiptToken, cities: owned }, 200, { 'cache-control': 'no-store' });
  });
  return app;
}

export const receiptDocs: RouteDoc[] = [
  {
    method: 'post',
    path: '/v1/receipts',
    tags: ['payments'],
    summary: 'Recover a receipt token with a wallet signature',
    description:
      'Free. A replayed X-Payment never returns a receipt token; a buyer who lost theirs signs an EIP-712 ReceiptRequest ' +
      '(domain {name: "Isocast", version: "1", chainId: 8453}, primaryType ReceiptRequest, fields wallet: address, timestamp: uint256) ' +
      'and gets a new token reading every city the wallet bought. The timestamp must be within 600 s of server time; each signed ' +
      '(wallet, timestamp) works once.',
    body: ReceiptRequestBody,
    responses: {
      200: { description: "A new receipt token and the wallet's ceilings", schema: ReceiptResult },
      400: {
        description: 'Missing or malformed wallet, timestamp or signature, or a body that is not a JSON object',
        schema: ErrorBody,
      },
      401: {
        description: '`stale timestamp`, `signature verification failed`, or `signature already used`',
        schema: ErrorBody,
      },
      403: { description: 'wallet is sanctioned; payment refused', schema: ErrorBody },
      404: { description: '`no purchases for this wallet`', schema: ErrorBody },
      429: RATE_LIMITED_DOC,
    },
  },
];
