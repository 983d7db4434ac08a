import type { Db } from '../db/open.ts';
import { createSingleUse } from '../db/single-use.ts';

/**
 * Chat registrations (one per wallet) and the single-use record of accepted signed requests.
 * Every change records the request's digest in the same transaction (the shared single-use
 * mechanism, db/single-use.ts), so a signed body can change state at most once even when two
 * copies race.
 */
export type Registration = {
  wallet: string;
  chatId: string;
  city: string | null;
  createdAt: number;
  updatedAt: number;
};

type RegistrationStore = {
  get(wallet: string): Registration | null;
  /** Whether this digest was already accepted (and not yet pruned). */
  digestUsed(digest: string): boolean;
  /** Upserts the registration and consumes the digest; false if the digest was used meanwhile. */
  set(input: {
    wallet: string;
    chatId: string;
    city: string | null;
    digest: string;
    nowMs: number;
    expiresAtSec: number;
  }): boolean;
  /** Deletes the registration and consumes the digest; the removed row, 'none', or 'replayed'. */
  remove(input: {
    wallet: string;
    digest: string;
    nowMs: number;
    expiresAtSec: number;
  }): Registration | 'none' | 'replayed';
};

type Row = { wallet: string; chat_id: string; city: string | null; created_at: number; updated_at: number };

const toRegistration = (r: Row): Registration => ({
  wallet: r.wallet,
  chatId: r.chat_id,
  city: r.city,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

export function createRegistrationStore(db: Db): RegistrationStore {
  const getRow = db.prepare(
    'SELECT wallet, chat_id, city, created_at, updated_at FROM delivery_registrations WHERE wallet = ?',
  );
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
  const consumeDigest = (i: { digest: string; wallet: string; nowMs: number; expiresAtSec: number }): boolean =>
    digests.consume(
      { digest: i.digest, wallet: i.wallet, used_at: Math.floor(i.nowMs / 1000), expires_at: i.expiresAtSec },
      i.nowMs,
    );

  const setTx = db.transaction((i: Parameters<RegistrationStore['set']>[0]): boolean => {
    if (!consumeDigest(i)) return false;
    upsert.run({ wallet: i.wallet, chatId: i.chatId, city: i.city, now: i.nowMs });
    return true;
  });

  const removeTx = db.transaction(
    (i: Parameters<RegistrationStore['remove']>[0]): Registration | 'none' | 'replayed' => {
      const row = getRow.get(i.wallet) as Row | undefined;
      // Nothing to delete consumes nothing: the 404 changed no state.
      if (!row) return 'none';
      if (!consumeDigest(i)) return 'replayed';
      del.run(i.wallet);
      return toRegistration(row);
    },
  );

  return {
    get: (wallet) => {
      const row = getRow.get(wallet) as Row | undefined;
      return row ? toRegistration(row) : null;
    },
    digestUsed: (digest) => digests.has({ digest }),
    set: (i) => setTx.immediate(i),
    remove: (i) => removeTx.immediate(i),
  };
}
