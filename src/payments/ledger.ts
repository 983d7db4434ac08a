import { createCipheriv, createDecipheriv, createHmac, randomBytes, type KeyObject } from 'node:crypto';
import type { Hex } from 'viem';
import type { GroupCommit } from '../db/group-commit.ts';
import type { Db } from '../db/open.ts';
import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/logger.ts';
import { type EntitlementStore, nextCeiling } from '../entitlements/store.ts';
import type { ReceiptStore } from '../entitlements/receipts.ts';
import type { SignalStore } from '../signals/store.ts';
import type { PurchaseOutcome } from './outcomes.ts';
import type { PaymentRow, PaymentStore } from './store.ts';

/** What a purchase answers: the entitlement after it, and the receipt token when this request moved the money. */
export type Purchase = Standing &
  Pick<PaymentRow, 'payer' | 'city' | 'count'> & {
    txHash: string | null;
    idempotent: boolean;
    /** As the receipt, only where this request's own settle moved the money: what a header alone reaches is public. */
    movedHere: boolean;
    /** A payment identifier sent again with its payment: the stored answer, and the cursor it read from. */
    replay?: { since: number | null };
  };

/** What a route keeps of its answer, for the same payment identifier sent again (payment-identifier.ts). */
export type ResultMemo = {
  route: string;
  since?: number;
  /** signedPaymentDigest of the request's payment (payment-identifier.ts): bound to the seal, never stored. */
  payment?: string;
};

/** `withReceipt`: this request's own settle call moved the money, so it gets the receipt token. */
type ApplyOptions = { withReceipt: boolean; memo?: ResultMemo };
type ApplyAt = ApplyOptions & { nowMs: number };

type Standing = { paidThroughSeq: number; latestSeq: number; receiptToken: string | null };
type StoredResult = ResultMemo & Standing;

const purchaseOf = (row: PaymentRow, s: Standing): Purchase => ({
  payer: row.payer,
  city: row.city,
  count: row.count,
  txHash: row.tx_hash,
  idempotent: false,
  paidThroughSeq: s.paidThroughSeq,
  latestSeq: s.latestSeq,
  receiptToken: s.receiptToken,
  movedHere: false,
});

const sealContext = (row: Pick<PaymentRow, 'id' | 'payment_identifier'>, payment: string | undefined) =>
  `payment ${row.id} ${row.payment_identifier} ${payment ?? ''}`;

/** The stores a purchase writes through, on the ledger's connection: inside its transactions, within them. */
export type LedgerStores = {
  signals: Pick<SignalStore, 'latestSeq'>;
  entitlements: Pick<EntitlementStore, 'get' | 'applyPurchase'>;
  receipts: Pick<ReceiptStore, 'issue' | 'walletFor'>;
};

export function createLedger(deps: {
  db: Db;
  stores: LedgerStores;
  store: PaymentStore;
  clock: Clock;
  logger: Logger;
  retryAfterSeconds: number;
  commits: GroupCommit;
  /** The server secret: a payment identifier's stored answer is sealed under a key derived from it. */
  secret: () => KeyObject;
}) {
  const { db, store, clock, logger, commits } = deps;
  const sealer = createSealer(deps.secret);
  const inDoubt: PurchaseOutcome = { kind: 'in_doubt', retryAfterSeconds: deps.retryAfterSeconds };
  const { signals, entitlements, receipts } = deps.stores;

  type Applied = { purchase: Purchase; row: PaymentRow };

  // One transaction: the payment leaves `settled`, the ceiling moves, the receipt (and an identifier's answer) is kept.
  function applyIn(id: number, { nowMs, withReceipt, memo }: ApplyAt): Applied | null {
    const row = store.markApplied(id, nowMs);
    if (!row) return null;
    const standing: Standing = {
      ...entitlements.applyPurchase({ wallet: row.payer, city: row.city, count: row.count, nowMs }),
      receiptToken: withReceipt ? receipts.issue(row.payer, id, nowMs) : null,
    };
    if (withReceipt && memo && row.payment_identifier) {
      const { payment, ...kept } = memo;
      const stored: StoredResult = { ...kept, ...standing };
      store.saveResult(id, sealer.seal(JSON.stringify(stored), sealContext(row, payment)));
    }
    return { purchase: { ...purchaseOf(row, standing), movedHere: withReceipt }, row };
  }
  const applyTx = db.transaction(applyIn);
  // The common case in one commit; any error rolls it all back for the two-commit path and its failure handling.
  const recordApply = (id: number, hash: string | null, at: ApplyAt): Applied | 'stale' => {
    if (!store.markSettled(id, hash, at.nowMs)) return 'stale';
    const applied = applyIn(id, at);
    if (!applied) throw new Error('payment left settled before it could be applied');
    return applied;
  };

  const logApplied = (a: Applied): PurchaseOutcome => {
    const { row, purchase } = a;
    logger.info('payment applied', {
      paymentId: row.id,
      payer: row.payer,
      city: row.city,
      count: row.count,
      txHash: row.tx_hash,
      settler: row.settler,
      paidThroughSeq: purchase.paidThroughSeq,
    });
    return { kind: 'applied', purchase };
  };

  /** Applies a settled payment exactly once; a failure queues a refund (`refunded`). */
  function apply(id: number, opts: ApplyOptions): PurchaseOutcome {
    const nowMs = clock.now();
    let applied: Applied | null;
    try {
      applied = applyTx(id, { ...opts, nowMs });
    } catch (err) {
      store.queueRefund(id, `entitlement update failed: ${(err as Error).message}`, nowMs);
      const row = store.get(id);
      logger.error('entitlement update failed after payment; refund queued', {
        paymentId: id,
        payer: row?.payer,
        nonce: row?.nonce,
        city: row?.city,
        settler: row?.settler,
        txHash: row?.tx_hash,
        err,
      });
      return { kind: 'refunded' };
    }
    if (!applied) return answer(store.get(id)!);
    return logApplied(applied);
  }

  /** What a stored payment answers, moving nothing but a settled row's entitlement. */
  function answer(row: PaymentRow): PurchaseOutcome {
    switch (row.status) {
      case 'applied': {
        // As it stands now, reads only: no receipt is issued for a repeat.
        const paidThroughSeq = entitlements.get(row.payer, row.city)?.paidThroughSeq ?? 0;
        const standing = { paidThroughSeq, latestSeq: signals.latestSeq(row.city), receiptToken: null };
        return { kind: 'known', purchase: { ...purchaseOf(row, standing), idempotent: true } };
      }
      case 'settled':
        return apply(row.id, { withReceipt: false });
      case 'refund_queued':
        return { kind: 'refunded' };
      case 'failed':
        return { kind: 'failed', reason: row.error ?? 'not settled' };
      default:
        return inDoubt;
    }
  }

  async function recordAndApply(id: number, txHash: Hex | null, opts: ApplyOptions): Promise<PurchaseOutcome> {
    const nowMs = clock.now();
    const hash = txHash ? txHash.toLowerCase() : null;
    let fast: Applied | 'stale' | null = null;
    try {
      fast = await commits.run(() => recordApply(id, hash, { ...opts, nowMs }));
    } catch {
      // Rolled back whole: nothing of it was written. The two commits below redo it step by step.
    }
    if (fast === 'stale') return answer(store.get(id)!);
    if (fast) return logApplied(fast);
    try {
      if (!store.markSettled(id, hash, nowMs)) return answer(store.get(id)!);
    } catch (err) {
      const other = hash ? store.byTxHash(hash) : null;
      if (!other) throw err;
      // A hash another row holds is a settler fault (one transfer, one authorization): in doubt, for the chain.
      const row = store.get(id)!;
      store.markInDoubt(id, `settler named transaction ${hash}, which belongs to payment ${other.id}`, nowMs);
      logger.error('settler returned a transaction hash held by another payment; left in doubt', {
        paymentId: id,
        otherPaymentId: other.id,
        payer: row.payer,
        nonce: row.nonce,
        settler: row.settler,
        txHash: hash,
      });
      return inDoubt;
    }
    return apply(id, opts);
  }

  /** An identifier's stored answer for the same signed payment and route; null if none or its token was revoked. */
  function replay(row: PaymentRow, memo: ResultMemo): Purchase | null {
    if (row.status !== 'applied' || !row.result || !row.payment_identifier || !memo.payment) return null;
    const plain = sealer.open(row.result, sealContext(row, memo.payment));
    if (!plain) return null;
    const r = JSON.parse(plain) as StoredResult;
    if (r.route !== memo.route) return null;
    if (r.receiptToken && receipts.walletFor(r.receiptToken) === null) return null;
    return { ...purchaseOf(row, r), replay: { since: r.since ?? null } };
  }

  /** Where `payer` would stand if the ceiling of buying `count` more leaves nothing after `since`; else null. */
  function leavesNothing(payer: string, r: { city: string; count: number; since: number }) {
    // Any new ceiling is at least `count`, so a cursor below it needs no lookup.
    if (r.since < r.count) return null;
    const paidThrough = entitlements.get(payer, r.city)?.paidThroughSeq ?? null;
    const latest = signals.latestSeq(r.city);
    return r.since >= nextCeiling(paidThrough, latest, r.count) ? { paidThrough: paidThrough ?? 0, latest } : null;
  }

  return { answer, recordAndApply, replay, leavesNothing };
}

export type Ledger = ReturnType<typeof createLedger>;

const IV_BYTES = 12;
const TAG_BYTES = 16;

/** AES-256-GCM for a stored answer holding a receipt token; `context` is authenticated, not stored. */
function createSealer(secret: () => KeyObject) {
  let key: Buffer | undefined;
  // Derived once, on first use: a purpose-bound key, never the secret itself.
  const keyOf = () => (key ??= createHmac('sha256', secret()).update('isocast sealed payment result v1').digest());
  return {
    seal(plain: string, context: string): string {
      const iv = randomBytes(IV_BYTES);
      const c = createCipheriv('aes-256-gcm', keyOf(), iv);
      c.setAAD(Buffer.from(context, 'utf8'));
      const body = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
      return Buffer.concat([iv, c.getAuthTag(), body]).toString('base64');
    },
    /** The plain text, or null for a value that does not open under this secret and context. */
    open(sealed: string, context: string): string | null {
      try {
        const raw = Buffer.from(sealed, 'base64');
        if (raw.length < IV_BYTES + TAG_BYTES) return null;
        const d = createDecipheriv('aes-256-gcm', keyOf(), raw.subarray(0, IV_BYTES));
        d.setAAD(Buffer.from(context, 'utf8'));
        d.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
        return Buffer.concat([d.update(raw.subarray(IV_BYTES + TAG_BYTES)), d.final()]).toString('utf8');
      } catch {
        return null;
      }
    },
  };
}
