import { hash, randomFillSync, timingSafeEqual } from 'node:crypto';
import type { Db } from '../db/open.ts';
import type { Statement } from 'better-sqlite3';

/**
 * Receipt bearer tokens (format label `isocast-receipt`): `isr_<selector>_<verifier>`, 96 random
 * bits of selector and 256 of verifier. Only sha256(verifier) is stored; the selector finds the
 * row and the hashes are compared in constant time, so neither a database read nor response
 * timing gives a usable token. A token reads for its wallet across all of that wallet's cities.
 */
export const RECEIPT_FORMAT = 'isocast-receipt';
const TOKEN = /^isr_([A-Za-z0-9_-]{16})_([A-Za-z0-9_-]{43})$/;

type Stmts = { insert: Statement; find: Statement };
const cache = new WeakMap<Db, Stmts>();

function stmts(db: Db): Stmts {
  let s = cache.get(db);
  if (!s) {
    s = {
      insert: db.prepare('INSERT INTO receipts (selector, verifier_hash, wallet, payment_id, created_at) VALUES (?, ?, ?, ?, ?)'),
      find: db.prepare('SELECT verifier_hash AS hash, wallet FROM receipts WHERE selector = ?'),
    };
    cache.set(db, s);
  }
  return s;
}

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

/** Creates and stores a token for the wallet; the plain token exists only in the return value. */
export function issueReceipt(db: Db, wallet: string, paymentId: number, nowMs: number): string {
  const random = tokenBytes();
  const selector = random.toString('base64url', 0, 12);
  const verifier = random.toString('base64url', 12, TOKEN_BYTES);
  stmts(db).insert.run(selector, sha256(verifier), wallet.toLowerCase(), paymentId, nowMs);
  return `isr_${selector}_${verifier}`;
}

/** The wallet a token reads for, or null for anything that is not a live token. */
export function walletForReceipt(db: Db, token: string): string | null {
  const m = TOKEN.exec(token);
  if (!m) return null;
  const row = stmts(db).find.get(m[1]) as { hash: Buffer; wallet: string } | undefined;
  const presented = sha256(m[2]!);
  // Compare even when the selector is unknown, so a miss costs the same as a wrong verifier.
  const stored = row?.hash ?? Buffer.alloc(32);
  return timingSafeEqual(stored, presented) && row ? row.wallet : null;
}
