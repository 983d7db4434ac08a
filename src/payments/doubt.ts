import type { Address, Hex } from 'viem';
import type { DecodedPayment } from '../x402/x-payment.ts';
import { MAX_AUTH_LIFETIME_S } from './binding.ts';
import type { BundleOffer } from './challenge.ts';
import type { Ledger, ResultMemo } from './ledger.ts';
import type { PurchaseOutcome } from './outcomes.ts';
import type { PurchaseSettings } from './purchase.ts';
import { validBeforeOf, type PaymentRow, type PaymentStore } from './store.ts';
import { verifyPayment, type VerifyTerms } from './verify.ts';

/** A buyer's header being settled. `recovered`: its signature recovered locally to `from` just now. */
export type Retry = BundleOffer & {
  p: DecodedPayment;
  recovered?: boolean;
  /** The purchase step of the salt the nonce is bound to. */
  bindingK?: number;
  memo?: ResultMemo;
  /** The payment identifier as stored: its keyed hash (payment-identifier.ts). */
  idKey?: string;
};

type ResolverDeps = Pick<PurchaseSettings, 'settler' | 'clock' | 'logger' | 'payTo'> & {
  store: PaymentStore;
  ledger: Ledger;
  inDoubt: PurchaseOutcome;
  /** What a bundle of `count` must pay, for verifying a resent header again. */
  terms: (count: number) => VerifyTerms;
  settleClaimed: (r: Retry, claimed: { id: number; payer: Address; fresh: boolean }) => Promise<PurchaseOutcome>;
};

/** A payment whose settle went quiet or was cut off: the token contract decides (never a fresh purchase). */
export function createResolver(deps: ResolverDeps) {
  const { settler, store, ledger, clock, logger, inDoubt } = deps;
  /**
   * Paid PAY_TO the price -> applied once; spent otherwise or unused past validBefore -> failed,
   * not charged; unused and valid -> settled again if the buyer resent it; else still in doubt.
   */
  return async function resolve(row: PaymentRow, retry: Retry | null): Promise<PurchaseOutcome> {
    const nowMs = clock.now();
    if (row.status === 'claimed') store.markInDoubt(row.id, 'settle attempt cut off', nowMs);
    const paid = {
      validBefore: validBeforeOf(row, MAX_AUTH_LIFETIME_S),
      payTo: deps.payTo,
      value: BigInt(row.amount_micro),
    };
    const st = await settler.status(row.payer as Address, row.nonce as Hex, paid);
    const fields = { paymentId: row.id, payer: row.payer, nonce: row.nonce, settler: row.settler };
    if (st.state === 'used') {
      logger.info('in-doubt payment resolved: the price reached PAY_TO on chain', { ...fields, txHash: st.txHash });
      return ledger.recordAndApply(row.id, st.txHash, { withReceipt: false });
    }
    // Spent without paying us (cancelled, or another transfer): it can never move money again.
    if (st.state === 'spent') {
      store.markFailed(row.id, `${st.reason}; not charged`, clock.now());
      logger.warn('in-doubt payment resolved: nonce spent, not charged', { ...fields, reason: st.reason });
      return { kind: 'failed', reason: st.reason };
    }
    if (st.state === 'unused' && st.expired) {
      store.markFailed(row.id, 'authorization expired unused on chain; not charged', clock.now());
      logger.info('in-doubt payment resolved: expired unused on chain, not charged', fields);
      return { kind: 'failed', reason: 'authorization expired unused on chain' };
    }
    if (st.state === 'unknown') logger.warn('in-doubt payment still unresolved', { ...fields, reason: st.reason });
    if (st.state !== 'unused' || !retry) return inDoubt;
    // Unused and still valid: the buyer's resent header may be settled again, once it verifies.
    const v = await verifyPayment(retry.p, deps.terms(retry.count));
    if (!v.ok || v.payer !== row.payer) return inDoubt;
    if (!store.reclaim(row.id, settler.kind, clock.now())) return ledger.answer(store.get(row.id)!);
    return deps.settleClaimed({ ...retry, recovered: v.recovered }, { id: row.id, payer: v.payer, fresh: false });
  };
}
