import { hash, randomFillSync, timingSafeEqual } from 'node:crypto';
import type { Db } from '../db/open.ts';

/**
 * Receipt bearer tokens (format label `isocast-receipt`): `isr_<selector>_<verifier>`, 96 random
 * bits of selector and 256 of verifier. Only sha256(verifier) is stored; the selector finds the
 * row and the hashes are compared in constant time, so neither a database read nor response
 * timing gives a usable token. A token reads for its wallet across all of that wallet's cities.
 */
const TOKEN = /^isr_([A-Za-z0-9_-]{16})_([A-Za-z0-9_-]{43})$/;

// One-shot hash: no Hash object per token issued or checked.
const sha256 = (s: string): Buffer => hash('sha256', s, 'buffer');

// Token randomness is drawn from the CSPRNG 4 KiB at a time (one call per 93 tokens rather than a
// call per token, a measurable part of a purchase); every byte is handed out once, then overwritten.
const TOKEN_BYTES = 44; // 12 bytes of selector, 32 of verifier
const pool = Buffer.alloc(TOKEN_BYTES * 93);
let poolUsed = pool.length;

function tokenBytes(): Buffer {
  if (poolUsed + TOKEN_BYTES > pool.length) {
    randomFillSync(pool);
    poolUsed = 0;
  }
  const out = Buffer.from(pool.subarray(poolUsed, poolUsed + TOKEN_BYTES));
  pool.fill(0, poolUsed, poolUsed + TOKEN_BYTES);
  poolUsed += TOKEN_BYTES;
  return out;
}

export type ReceiptStore = ReturnType<typeof createReceiptStore>;

export function createReceiptStore(db: Db) {
  const insert = db.prepare(
    'INSERT INTO receipts (selector, verifier_hash, wallet, payment_id, created_at) VALUES (?, ?, ?, ?, ?)',
  );
  const find = db.prepare(
    'SELECT verifier_hash AS hash, wallet, created_at AS createdAt FROM receipts WHERE selector = ?',
  );
  const revoke = db.prepare('DELETE FROM receipts WHERE wallet = ?');
  /** The stored token's wallet and issue time (ms), or null; expiry is the caller's. */
  function lookup(token: string): { wallet: string; createdAt: number } | null {
    const m = TOKEN.exec(token);
    if (!m) return null;
    const row = find.get(m[1]) as { hash: Buffer; wallet: string; createdAt: number } | undefined;
    const presented = sha256(m[2]!);
    // Compare even when the selector is unknown, so a miss costs the same as a wrong verifier.
    const stored = row?.hash ?? Buffer.alloc(32);
    return timingSafeEqual(stored, presented) && row ? { wallet: row.wallet, createdAt: row.createdAt } : null;
  }
  return {
    /** The plain token exists only in the return value. */
    issue(wallet: string, paymentId: number, nowMs: number): string {
      const random = tokenBytes();
      const selector = random.toString('base64url', 0, 12);
      const verifier = random.toString('base64url', 12, TOKEN_BYTES);
      insert.run(selector, sha256(verifier), wallet.toLowerCase(), paymentId, nowMs);
      return `isr_${selector}_${verifier}`;
    },
    walletFor: (token: string): string | null => lookup(token)?.wallet ?? null,
    lookup,
    revokeAll: (wallet: string): number => revoke.run(wallet.toLowerCase()).changes,
  };
}

/**
 * One retention batch: up to `limit` tokens older than `cutoff` whose wallet is owed no further signal
 * (one can be recovered by signing), in one set-based statement rather than several per token.
 */
export function createReceiptPrune(db: Db): { run(cutoff: number, limit: number): { changes: number } } {
  return db.prepare(`DELETE FROM receipts WHERE selector IN (SELECT r.selector FROM receipts r WHERE r.created_at < ?
    AND NOT EXISTS (SELECT 1 FROM entitlements e WHERE e.wallet = r.wallet
      AND e.paid_through_seq > (SELECT coalesce(max(s.seq), 0) FROM signals s WHERE s.city = e.city))
    LIMIT +?)`);
}
