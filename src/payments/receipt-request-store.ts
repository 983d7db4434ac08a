import { createSingleUse } from '../db/single-use.ts';
import type { Db } from '../db/open.ts';

/**
 * Each signed receipt request or revocation (wallet, timestamp) is consumed once per kind (spec 8);
 * a row is forgotten once its timestamp is twice the skew old, as it is refused as stale anyway.
 */
type ReceiptSignedUse = 'request' | 'revocation';

type Use = { wallet: string; timestamp: number; used_at: number };

export function createReceiptRequestStore(db: Db) {
  const table = (name: string) =>
    createSingleUse<Use>(db, {
      table: name,
      key: ['wallet', 'timestamp'],
      columns: ['wallet', 'timestamp', 'used_at'],
      agedBy: { column: 'timestamp', unit: 's' },
    });
  const uses = { request: table('receipt_requests'), revocation: table('receipt_revocations') };
  return {
    /** True the first time (wallet, timestamp) is used for `kind`; run inside the caller's transaction. */
    consume(u: { kind: ReceiptSignedUse; wallet: string; timestamp: number; nowMs: number }): boolean {
      return uses[u.kind].consume({ wallet: u.wallet, timestamp: u.timestamp, used_at: u.nowMs }, u.nowMs);
    },
  };
}
