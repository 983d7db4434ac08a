import type { Db } from '../db/open.ts';
import type { SignalStore } from '../signals/store.ts';

/**
 * The entitlement rule (spec 3): buying C signals while caught up extends the ceiling by C;
 * buying after falling behind first raises the floor to latestSeq, so a buyer never pays for a
 * backlog they skipped. No purchase before means P = 0.
 */
export function nextCeiling(paidThrough: number | null, latestSeq: number, count: number): number {
  return Math.max(paidThrough ?? 0, latestSeq) + count;
}

/** One ceiling per (wallet, city), wallet the lowercase recovered payer. */
type Entitlement = { paidThroughSeq: number; totalPaidSignals: number };

export type EntitlementStore = ReturnType<typeof createEntitlementStore>;

/** `signals` gives the latest seq the ceiling starts from (read inside the caller's transaction). */
export function createEntitlementStore(db: Db, signals: Pick<SignalStore, 'latestSeq'>) {
  const get = db.prepare(
    'SELECT paid_through_seq AS paidThroughSeq, total_paid_signals AS totalPaidSignals FROM entitlements WHERE wallet = ? AND city = ?',
  );
  const cities = db.prepare(
    'SELECT city, paid_through_seq AS paidThroughSeq FROM entitlements WHERE wallet = +? ORDER BY city',
  );
  const upsert =
    db.prepare(`INSERT INTO entitlements (wallet, city, paid_through_seq, total_paid_signals, updated_at) VALUES (@wallet, @city, @ceiling, @count, @nowMs)
    ON CONFLICT (wallet, city) DO UPDATE SET paid_through_seq = @ceiling, total_paid_signals = total_paid_signals + @count, updated_at = @nowMs`);
  const recent =
    db.prepare(`SELECT wallet, city, paid_through_seq AS paidThroughSeq, total_paid_signals AS totalPaidSignals,
    updated_at AS updatedAtMs FROM entitlements ORDER BY updated_at DESC, wallet, city LIMIT +?`);
  // Kept by triggers (schema.sql 0007): counting a table that only grows would cost more every day.
  const count = db.prepare(`SELECT n FROM row_counts WHERE name = 'entitlements'`).pluck();
  const entitlementOf = (wallet: string, city: string): Entitlement | null =>
    (get.get(wallet.toLowerCase(), city) as Entitlement | undefined) ?? null;
  return {
    get: entitlementOf,
    citiesOf: (wallet: string) => cities.all(wallet) as { city: string; paidThroughSeq: number }[],
    /** Run inside the caller's transaction, so the payment's status change and this write commit or fail together. */
    applyPurchase(p: { wallet: string; city: string; count: number; nowMs: number }) {
      const wallet = p.wallet.toLowerCase();
      const latest = signals.latestSeq(p.city);
      const before = entitlementOf(wallet, p.city);
      const ceiling = nextCeiling(before?.paidThroughSeq ?? null, latest, p.count);
      upsert.run({ wallet, city: p.city, ceiling, count: p.count, nowMs: p.nowMs });
      return {
        paidThroughSeq: ceiling,
        totalPaidSignals: (before?.totalPaidSignals ?? 0) + p.count,
        latestSeq: latest,
      };
    },
    recent: (limit: number) =>
      recent.all(limit) as (Entitlement & { wallet: string; city: string; updatedAtMs: number })[],
    count: () => count.get() as number,
  };
}
