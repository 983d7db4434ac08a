import type { Db } from '../db/open.ts';
import { createSingleUse } from '../db/single-use.ts';

/**
 * Chat registrations (one per wallet) and the single-use record of accepted signed requests.
 * Every change records the request's digest in the same transaction (the shared single-use
 * mechanism, db/single-use.ts), so a signed body can change state at most once even when two
 * copies race.
 */
/** What a delete removed: the chat and the city it was registered for. */
type Removed = { chatId: string; city: string | null };

/** The accepted signed request a change consumes; expires_at ages its record. */
type SignedUse = { wallet: string; digest: string; nowMs: number; expiresAtSec: number };

type RegistrationStore = {
  /** Whether this digest was already accepted (and not yet pruned). */
  digestUsed(digest: string): boolean;
  /** Upserts the registration and consumes the digest; false if the digest was used meanwhile. */
  set(input: SignedUse & { chatId: string; city: string | null }): boolean;
  /** Deletes the registration and consumes the digest; the removed row, 'none', or 'replayed'. */
  remove(input: SignedUse): Removed | 'none' | 'replayed';
};

export function createRegistrationStore(db: Db): RegistrationStore {
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

  const setTx = db.transaction((i: Parameters<RegistrationStore['set']>[0]): boolean => {
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
    digestUsed: (digest) => digests.has({ digest }),
    set: (i) => setTx.immediate(i),
    remove: (i) => removeTx.immediate(i),
  };
}
