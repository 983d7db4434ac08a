import type { Db } from '../db/open.ts';
import type { EntitlementStore } from '../entitlements/store.ts';
import type { ReceiptStore } from '../entitlements/receipts.ts';
import { tooManyWaiting } from '../lib/api-errors.ts';
import type { Ctx } from '../lib/http.ts';
import type { SignalNotifier } from '../signals/notifier.ts';
import type { SignalReader } from '../signals/read-store.ts';

/**
 * The held read (`GET /v1/signals?wait=N`): a credential's read inside the bundle with
 * nothing past `since` yet is held until a signal for its city commits, `wait` elapses, the client
 * leaves or the server stops, then answered exactly as without `wait`. Apart from the router
 * (paid-routes.ts) because holding has its own limits (MAX_SIGNAL_WAITERS, a 503 past it) and its
 * own lookups: the reads one commit wakes share them (below).
 */
const WAITERS_RETRY_S = 2;

/**
 * One wallet's share of MAX_SIGNAL_WAITERS: 5 %, at least 4. A cheap token
 * (or several tokens of one wallet, from many addresses) holds at most this many reads; past it
 * its next `wait` read answers 503 with Retry-After, as past the pool itself, so a paying buyer
 * of another wallet still finds a slot.
 */
export function walletShare(maxWaiters: number): number {
  return Math.max(4, Math.ceil(maxWaiters / 20));
}

export type Receipt = { wallet: string; createdAt: number } | null;

/** What the reads woken by one commit look up, each once: a receipt per token, a ceiling per wallet. */
export type WakeLookups = {
  receipt(token: string): Receipt;
  paidThrough(wallet: string, city: string): number;
};

/**
 * Lookups shared by the held reads one commit wakes: each must answer as a fresh read would (a
 * token revoked while held, the ceiling now), but 1,000 held reads of one wallet must not be
 * 2,000 identical queries. Answers live for one wake (`notifier.wakes()`) and only while this
 * connection has written nothing (`total_changes()`): any write in between makes the next read
 * look again.
 */
/** The stores the lookups ask (built once in the wiring, src/stores.ts). */
type LookupStores = { entitlements: Pick<EntitlementStore, 'get'>; receipts: Pick<ReceiptStore, 'lookup'> };

export function createWakeLookups(db: Db, notifier: SignalNotifier, stores: LookupStores): { current(): WakeLookups } {
  const direct = directLookups(stores);
  const changes = db.prepare('SELECT total_changes()').pluck();
  const receipts = new Map<string, Receipt>();
  const ceilings = new Map<string, number>();
  let wake = -1;
  let written = -1;
  const lookups: WakeLookups = {
    receipt(token) {
      let r = receipts.get(token);
      if (r === undefined) {
        r = direct.receipt(token);
        receipts.set(token, r);
      }
      return r;
    },
    paidThrough(wallet, city) {
      const key = `${wallet}\n${city}`;
      let n = ceilings.get(key);
      if (n === undefined) {
        n = direct.paidThrough(wallet, city);
        ceilings.set(key, n);
      }
      return n;
    },
  };
  return {
    current() {
      const w = notifier.wakes();
      const n = changes.get() as number;
      if (w !== wake || n !== written) {
        receipts.clear();
        ceilings.clear();
        wake = w;
        written = n;
      }
      return lookups;
    },
  };
}

/** What decides a hold: the city and cursor read, and `wait` (seconds; null: answer now). */
type HoldQuery = { city: string; since: number; wait: number | null };

export function createHeldReads(deps: {
  db: Db;
  notifier: SignalNotifier;
  /** Reads held at once at most (MAX_SIGNAL_WAITERS); past it a `wait` read answers 503. */
  maxWaiters: number;
  entitlements: Pick<EntitlementStore, 'get'>;
  receipts: Pick<ReceiptStore, 'lookup'>;
  reader: Pick<SignalReader, 'latestSeq'>;
}) {
  const direct = directLookups(deps);
  const shared = createWakeLookups(deps.db, deps.notifier, deps);
  const share = walletShare(deps.maxWaiters);
  /** Reads held now, per wallet (lowercase); a wallet leaves the map with its last one. */
  const perWallet = new Map<string, number>();
  return {
    /** The lookups of a read answered now. */
    direct,

    /**
     * Whether this read is held: `wait` asked, holding enabled, not HEAD, and the wallet is inside
     * its bundle but past the latest signal (exhaustion answers at once).
     */
    holds(c: Ctx, q: HoldQuery, wallet: string): boolean {
      if (!q.wait || deps.maxWaiters <= 0 || c.req.method === 'HEAD') return false;
      const paidThrough = deps.entitlements.get(wallet, q.city)?.paidThroughSeq ?? 0;
      return q.since < paidThrough && deps.reader.latestSeq(q.city) <= q.since;
    },

    /**
     * Holds the read, then `answer`s it with the wake's lookups: shared by the reads one commit
     * woke, the database's own otherwise. `answer` checks the credential again (a token revoked or
     * expired while held answers as it would now). Too many held already, in all or by this
     * wallet (walletShare): 503 with Retry-After.
     */
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
        .then((reason) => answer(reason === 'signal' ? shared.current() : direct));
    },
  };
}

/** The same questions asked of the database each time (a read that is not woken by a commit). */
function directLookups(stores: LookupStores): WakeLookups {
  return {
    receipt: (token) => stores.receipts.lookup(token),
    paidThrough: (wallet, city) => stores.entitlements.get(wallet, city)?.paidThroughSeq ?? 0,
  };
}
