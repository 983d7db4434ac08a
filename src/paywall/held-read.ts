import type { Db } from '../db/open.ts';
import type { EntitlementStore } from '../entitlements/store.ts';
import type { ReceiptStore } from '../entitlements/receipts.ts';
import { tooManyWaiting } from '../lib/api-errors.ts';
import type { Ctx } from '../lib/http.ts';
import type { SignalNotifier } from '../signals/notifier.ts';
import type { SignalReader } from '../signals/read-store.ts';

/** `GET /v1/signals?wait=N`: held until a signal commits, N s pass or the client leaves, then answered as without. */
const WAITERS_RETRY_S = 2;

/** One wallet's share of MAX_SIGNAL_WAITERS (5 %, at least 4): no wallet takes every slot from other buyers. */
export function walletShare(maxWaiters: number): number {
  return Math.max(4, Math.ceil(maxWaiters / 20));
}

/** What the reads woken by one commit look up, each once: a receipt per token, a ceiling per wallet. */
export type WakeLookups = ReturnType<typeof directLookups>;
type Receipt = ReturnType<WakeLookups['receipt']>;

type LookupStores = { entitlements: Pick<EntitlementStore, 'get'>; receipts: Pick<ReceiptStore, 'lookup'> };

/**
 * Shared by the reads one commit wakes (1,000 held reads of a wallet are not 2,000 queries), for one wake and only
 * while this connection wrote nothing (`total_changes()`), so each answers as a fresh read would.
 */
export function createWakeLookups(db: Db, notifier: SignalNotifier, stores: LookupStores): () => WakeLookups {
  const direct = directLookups(stores);
  const changes = db.prepare('SELECT total_changes()').pluck();
  const receipts = new Map<string, Receipt>();
  const ceilings = new Map<string, number>();
  let wake = -1;
  let written = -1;
  const memo = <T>(cache: Map<string, T>, key: string, ask: () => T): T => {
    if (!cache.has(key)) cache.set(key, ask());
    return cache.get(key) as T;
  };
  const lookups: WakeLookups = {
    receipt: (token) => memo(receipts, token, () => direct.receipt(token)),
    paidThrough: (wallet, city) => memo(ceilings, `${wallet}\n${city}`, () => direct.paidThrough(wallet, city)),
  };
  return () => {
    const w = notifier.wakes();
    const n = changes.get() as number;
    if (w !== wake || n !== written) {
      receipts.clear();
      ceilings.clear();
      wake = w;
      written = n;
    }
    return lookups;
  };
}

/** What decides a hold: the city and cursor read, and `wait` (seconds; null: answer now). */
type HoldQuery = { city: string; since: number; wait: number | null };

export function createHeldReads(
  deps: LookupStores & {
    db: Db;
    notifier: SignalNotifier;
    /** Reads held at once at most (MAX_SIGNAL_WAITERS); past it a `wait` read answers 503. */
    maxWaiters: number;
    reader: Pick<SignalReader, 'latestSeq'>;
  },
) {
  const direct = directLookups(deps);
  const shared = createWakeLookups(deps.db, deps.notifier, deps);
  const share = walletShare(deps.maxWaiters);
  /** Reads held now, per wallet (lowercase); a wallet leaves the map with its last one. */
  const perWallet = new Map<string, number>();
  return {
    direct,

    /** Held only inside the bundle but past the latest signal: exhaustion answers at once. */
    holds(c: Ctx, q: HoldQuery, wallet: string): boolean {
      if (!q.wait || deps.maxWaiters <= 0 || c.req.method === 'HEAD') return false;
      const paidThrough = deps.entitlements.get(wallet, q.city)?.paidThroughSeq ?? 0;
      return q.since < paidThrough && deps.reader.latestSeq(q.city) <= q.since;
    },

    /** `answer` checks the credential again (revoked while held); too many held, in all or by this wallet: 503. */
    hold(c: Ctx, q: HoldQuery & { wallet: string }, answer: (lookups: WakeLookups) => Response): Promise<Response> {
      if (deps.notifier.waiting() >= deps.maxWaiters) throw tooManyWaiting(WAITERS_RETRY_S);
      const held = perWallet.get(q.wallet) ?? 0;
      if (held >= share) throw tooManyWaiting(WAITERS_RETRY_S);
      perWallet.set(q.wallet, held + 1);
      const release = () => {
        const n = (perWallet.get(q.wallet) ?? 1) - 1;
        if (n <= 0) perWallet.delete(q.wallet);
        else perWallet.set(q.wallet, n);
      };
      // A client that leaves frees its waiter at once (the request's abort signal).
      return deps.notifier
        .wait(q.city, q.since, { ms: (q.wait ?? 0) * 1000, abort: c.req.raw.signal })
        .finally(release)
        .then((reason) => answer(reason === 'signal' ? shared() : direct));
    },
  };
}

/** The same questions asked of the database each time (a read that is not woken by a commit). */
function directLookups(stores: LookupStores) {
  return {
    receipt: (token: string) => stores.receipts.lookup(token),
    paidThrough: (wallet: string, city: string) => stores.entitlements.get(wallet, city)?.paidThroughSeq ?? 0,
  };
}
