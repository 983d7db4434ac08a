import type { Db } from '../db/open.ts';
import { createSingleUse } from '../db/single-use.ts';

/**
 * Chat registrations (one per wallet). Every change consumes the signed request's digest in the
 * same transaction (db/single-use.ts), so a signed body changes state at most once even when two
 * copies race.
 */
type Removed = { chatId: string; city: string | null };

/** The accepted signed request a change consumes; expires_at ages its record. */
type SignedUse = { wallet: string; digest: string; nowMs: number; expiresAtSec: number };

export function createRegistrationStore(db: Db) {
  const getRow = db.prepare('SELECT chat_id AS chatId, city FROM delivery_registrations WHERE wallet = ?');
  // expires_at is the signed timestamp plus the skew (unix seconds): its index ages the rows.
  const digests = createSingleUse<{ digest: string; wallet: string; used_at: number; expires_at: number }>(db, {
    table: 'delivery_signatures',
    key: ['digest'],
    columns: ['digest', 'wallet', 'used_at', 'expires_at'],
    agedBy: { column: 'expires_at', unit: 's' },
  });
  const upsert =
    db.prepare(`INSERT INTO delivery_registrations (wallet, chat_id, city, created_at, updated_at) VALUES (@wallet, @chatId, @city, @now, @now)
    ON CONFLICT (wallet) DO UPDATE SET chat_id = excluded.chat_id, city = excluded.city, updated_at = excluded.updated_at`);
  const del = db.prepare('DELETE FROM delivery_registrations WHERE wallet = ?');

  // Consuming first makes the digest check and the change one atomic step.
  const consumeDigest = (i: SignedUse): boolean =>
    digests.consume(
      { digest: i.digest, wallet: i.wallet, used_at: Math.floor(i.nowMs / 1000), expires_at: i.expiresAtSec },
      i.nowMs,
    );

  const setTx = db.transaction((i: SignedUse & { chatId: string; city: string | null }): boolean => {
    if (!consumeDigest(i)) return false;
    upsert.run({ wallet: i.wallet, chatId: i.chatId, city: i.city, now: i.nowMs });
    return true;
  });

  const removeTx = db.transaction((i: SignedUse): Removed | 'none' | 'replayed' => {
    const row = getRow.get(i.wallet) as Removed | undefined;
    // Nothing to delete consumes nothing: the 404 changed no state.
    if (!row) return 'none';
    if (!consumeDigest(i)) return 'replayed';
    del.run(i.wallet);
    return row;
  });

  return {
    digestUsed: (digest: string) => digests.has({ digest }),
    /** false if the digest was used meanwhile. */
    set: (i: SignedUse & { chatId: string; city: string | null }) => setTx.immediate(i),
    /** The removed row, 'none', or 'replayed'. */
    remove: (i: SignedUse) => removeTx.immediate(i),
  };
}
