import type { Db } from '../db/open.ts';
import { SIGNED_REQUEST_SKEW_SEC } from '../lib/signed-request.ts';

/**
 * The single-use bookkeeping of signed receipt requests and revocations (spec 8): each signed
 * (wallet, timestamp) is consumed once per kind. A row older than twice the skew window can be
 * dropped: its timestamp is refused as stale before this store is asked.
 */
export type ReceiptSignedUse = 'request' | 'revocation';

export function createReceiptRequestStore(db: Db) {
  const consume = {
    request: db.prepare(
      'INSERT INTO receipt_requests (wallet, timestamp, used_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING',
    ),
    revocation: db.prepare(
      'INSERT INTO receipt_revocations (wallet, timestamp, used_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING',
    ),
  };
  const prune = {
    request: db.prepare('DELETE FROM receipt_requests WHERE timestamp < ?'),
    revocation: db.prepare('DELETE FROM receipt_revocations WHERE timestamp < ?'),
  };
  return {
    /** True the first time (wallet, timestamp) is used for `kind`; run inside the caller's transaction. */
    consume(kind: ReceiptSignedUse, wallet: string, timestamp: number, nowMs: number): boolean {
      if (consume[kind].run(wallet, timestamp, nowMs).changes !== 1) return false;
      prune[kind].run(Math.floor(nowMs / 1000) - 2 * SIGNED_REQUEST_SKEW_SEC);
      return true;
    },
  };
}

export type ReceiptRequestStore = ReturnType<typeof createReceiptRequestStore>;
