import type { Db } from '../db/open.ts';

/**
 * The (payer, nonce) row claimed before any settle call is the lock (docs/payments.md "Exactly once"). claimed ->
 * settled -> applied | refund_queued; -> failed only when no transfer can happen; in_doubt left on the chain's word.
 */
type PaymentStatus = 'claimed' | 'settled' | 'applied' | 'failed' | 'refund_queued' | 'in_doubt';

export type PaymentRow = {
  id: number;
  payer: string;
  nonce: string;
  city: string;
  count: number;
  amount_micro: number;
  settler: string;
  status: PaymentStatus;
  tx_hash: string | null;
  error: string | null;
  created_at: number;
  updated_at: number;
  valid_before: number | null;
  /** The purchase step k of the salt the nonce is bound to (binding.ts); settling it moves the bundle's k. */
  binding_k: number | null;
  /** The v2 buyer's `payment-identifier` id (payment-identifier.ts), unique; null without one. */
  payment_identifier: string | null;
  /** The sealed answer of the request that moved the money (ledger.ts), for the same id sent again. */
  result: string | null;
};

type NewPayment = {
  payer: string;
  nonce: string;
  city: string;
  count: number;
  amountMicro: number;
  settler: string;
  nowMs: number;
  validBefore: number;
  bindingK: number | null;
  /** The buyer's payment identifier: a second payment with it is refused by the unique index. */
  identifier?: string | null;
};

/** `row: null`: nothing holds (payer, nonce), but another payment holds the identifier. */
type ClaimResult = { claimed: true; id: number } | { claimed: false; row: PaymentRow | null };

export type PaymentStore = ReturnType<typeof createPaymentStore>;

export const rowFields = (r: PaymentRow) => ({ paymentId: r.id, payer: r.payer, nonce: r.nonce, settler: r.settler });

export function createPaymentStore(db: Db) {
  const insert =
    db.prepare(`INSERT INTO payments (payer, nonce, city, count, amount_micro, settler, status, created_at, updated_at, valid_before, binding_k, payment_identifier)
    VALUES (@payer, @nonce, @city, @count, @amountMicro, @settler, 'claimed', @nowMs, @nowMs, @validBefore, @bindingK, @identifier)
    ON CONFLICT DO NOTHING`);
  const byKey = db.prepare('SELECT * FROM payments WHERE payer = ? AND nonce = ?');
  const byIdentifier = db.prepare('SELECT * FROM payments WHERE payment_identifier = ?');
  const saveResult = db.prepare('UPDATE payments SET result = ? WHERE id = ? AND payment_identifier IS NOT NULL');
  const byId = db.prepare('SELECT * FROM payments WHERE id = ?');
  const byTx = db.prepare('SELECT * FROM payments WHERE tx_hash = ?');
  const move = (set: string, from: string) =>
    db.prepare(`UPDATE payments SET ${set}, updated_at = ? WHERE id = ? AND status ${from}`);
  const reclaim = move(`status = 'claimed', error = NULL, settler = ?`, `= 'in_doubt'`);
  const settled = move(`status = 'settled', tx_hash = ?, error = NULL`, `IN ('claimed', 'in_doubt')`);
  const failed = move(`status = 'failed', error = ?`, `IN ('claimed', 'in_doubt')`);
  const inDoubt = move(`status = 'in_doubt', error = ?`, `= 'claimed'`);
  // RETURNING: the apply transaction needs the row it moved, and reading it back was a statement more.
  const applied = move(`status = 'applied'`, `= 'settled' RETURNING *`);
  const refundStatus = move(`status = 'refund_queued', error = ?`, `= 'settled'`);
  const refund =
    db.prepare(`INSERT INTO refunds (payment_id, wallet, amount_micro, tx_hash, reason, created_at) VALUES (?, ?, ?, ?, ?, ?)
    ON CONFLICT (payment_id) DO NOTHING`);
  const open = db.prepare(`SELECT * FROM payments WHERE status IN ('claimed', 'settled', 'in_doubt') ORDER BY id`);

  const queueRefund = db.transaction((id: number, reason: string, nowMs: number): boolean => {
    const row = byId.get(id) as PaymentRow | undefined;
    if (!row || refundStatus.run(reason, nowMs, id).changes !== 1) return false;
    refund.run(id, row.payer, row.amount_micro, row.tx_hash, reason, nowMs);
    return true;
  });

  return {
    claim(p: NewPayment): ClaimResult {
      const r = insert.run({ ...p, identifier: p.identifier ?? null });
      if (r.changes === 1) return { claimed: true, id: Number(r.lastInsertRowid) };
      return { claimed: false, row: (byKey.get(p.payer, p.nonce) as PaymentRow | undefined) ?? null };
    },
    byKey: (payer: string, nonce: string) => (byKey.get(payer, nonce) as PaymentRow | undefined) ?? null,
    byIdentifier: (identifier: string) => (byIdentifier.get(identifier) as PaymentRow | undefined) ?? null,
    /** Statement for the apply transaction: the sealed answer of a payment that has an identifier. */
    saveResult: (id: number, sealed: string): boolean => saveResult.run(sealed, id).changes === 1,
    /** An in-doubt row the chain says is unused and valid; never a failed one: its buyer was told "not charged". */
    reclaim: (id: number, settler: string, nowMs: number): boolean => reclaim.run(settler, nowMs, id).changes === 1,
    get: (id: number) => (byId.get(id) as PaymentRow | undefined) ?? null,
    byTxHash: (txHash: string) => (byTx.get(txHash) as PaymentRow | undefined) ?? null,
    /** Throws when another payment holds txHash; the salt_step trigger moves the bundle's step in the same statement. */
    markSettled: (id: number, txHash: string | null, nowMs: number): boolean =>
      settled.run(txHash, nowMs, id).changes === 1,
    markFailed: (id: number, reason: string, nowMs: number): boolean => failed.run(reason, nowMs, id).changes === 1,
    markInDoubt: (id: number, reason: string, nowMs: number): boolean => inDoubt.run(reason, nowMs, id).changes === 1,
    /** Statement for the apply transaction: settled -> applied exactly once; the row as moved, else null. */
    markApplied: (id: number, nowMs: number): PaymentRow | null =>
      (applied.get(nowMs, id) as PaymentRow | undefined) ?? null,
    queueRefund: (id: number, reason: string, nowMs: number): boolean => queueRefund(id, reason, nowMs),
    open: () => open.all() as PaymentRow[],
  };
}

/** Reads of `payments` and `refunds`; totals are the triggers' row_counts; row shapes are admin/schemas.ts's. */
export function createPaymentReads(db: Db) {
  // UTC day numbers by integer division (far cheaper than strftime); the partial index payments_applied answers it.
  const revenue =
    db.prepare(`SELECT created_at / 86400000 AS dayNumber, city, count(*) AS payments, sum(amount_micro) AS micro
      FROM payments WHERE status = 'applied' AND created_at >= ? GROUP BY dayNumber, city ORDER BY dayNumber, city`);
  const totals = db.prepare(`SELECT micro, n FROM row_counts WHERE name = 'payments:applied'`);
  const recent = db.prepare(
    `SELECT id, created_at, payer, city, count, amount_micro, settler, tx_hash, status, error FROM payments ORDER BY id DESC LIMIT +?`,
  );
  const refunds = db.prepare(
    `SELECT id, payment_id, created_at, wallet, amount_micro, tx_hash, reason, status FROM refunds WHERE status = 'queued' ORDER BY id LIMIT +?`,
  );
  // Scans refunds (no status index): a refund row exists only when an apply failed after settlement.
  const refundTotals = db.prepare(
    `SELECT count(*) AS n, coalesce(sum(amount_micro), 0) AS micro FROM refunds WHERE status = 'queued'`,
  );
  const doubt = db.prepare(`SELECT count(*) AS n, min(created_at) AS oldest FROM payments WHERE status = 'in_doubt'`);
  // The partial index payments_open answers both.
  const open = db.prepare(
    `SELECT status, count(*) AS n FROM payments WHERE status IN ('claimed', 'settled', 'in_doubt') GROUP BY status`,
  );
  const lastApplied = db.prepare(`SELECT max(id) FROM payments WHERE payer = +? AND status = 'applied'`).pluck();
  return {
    revenueSince: (sinceMs: number) =>
      revenue.all(sinceMs) as { dayNumber: number; city: string; payments: number; micro: number }[],
    appliedTotals: () => totals.get() as { micro: number; n: number },
    recent: (limit: number) => recent.all(limit) as Record<string, unknown>[],
    queuedRefunds: (limit: number) => refunds.all(limit) as Record<string, unknown>[],
    queuedRefundTotals: () => refundTotals.get() as { n: number; micro: number },
    inDoubt: () => doubt.get() as { n: number; oldest: number | null },
    openByStatus: () => open.all() as { status: string; n: number }[],
    /** The payer's newest applied payment id, or null (POST /v1/receipts ties a new token to it). */
    lastAppliedId: (payer: string) => lastApplied.get(payer) as number | null,
  };
}

/** Up to `limit` failed attempts last changed before `cutoff`: any other status is the ledger or not final. */
export function createFailedPaymentPrune(db: Db): { run(cutoff: number, limit: number): { changes: number } } {
  return db.prepare(
    `DELETE FROM payments WHERE id IN (SELECT id FROM payments WHERE status = 'failed' AND updated_at < ? LIMIT +?)`,
  );
}
