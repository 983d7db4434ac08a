import type { Db } from '../db/open.ts';
import type { EntitlementStore } from '../entitlements/store.ts';
import type { ReceiptStore } from '../entitlements/receipts.ts';
import type { SignalNotifier } from '../signals/notifier.ts';

export type Receipt = { wallet: string; createdAt: number } | null;

/** What the reads woken by one commit look up, each once: a receipt per token, a ceiling per wallet. */
export type WakeLookups = {
  receipt(token: string): Receipt;
  paidThrough(wallet: string, city: string): number;
};

/**
 * Lookups shared by the held reads (`wait`, issue 25.4) that one commit wakes. A commit wakes
 * every held read of its city in the same tick and each must be answered as a fresh read would be
 * (token revoked or expired while held, the wallet's ceiling now), so each used to run its own
 * receipt and entitlement queries: 1,000 held reads of one wallet were 2,000 identical queries.
 * Answers are remembered only for one wake (`notifier.wakes()`) and only while this connection
 * has written nothing (`total_changes()`, well under a µs): a revocation, a purchase or any other
 * write in between makes the next read look again. Different wallets still cost one indexed
 * lookup each; the page body for equal (since, end, paid_through, latest) is shared already
 * (signals/read-store.ts pageBytes).
 */
/** The stores the lookups ask (built once in the wiring, src/stores.ts). */
export type LookupStores = { entitlements: Pick<EntitlementStore, 'get'>; receipts: Pick<ReceiptStore, 'lookup'> };

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

/** The same questions asked of the database each time (a read that is not woken by a commit). */
export function directLookups(stores: LookupStores): WakeLookups {
  return {
    receipt: (token) => stores.receipts.lookup(token),
    paidThrough: (wallet, city) => stores.entitlements.get(wallet, city)?.paidThroughSeq ?? 0,
  };
}
