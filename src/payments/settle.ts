import type { Address, Hex } from 'viem';
import { bundlePrice } from '../../packages/isocast-client/src/pricing.ts';
import type { DecodedPayment } from '../x402/x-payment.ts';
import { MAX_AUTH_LIFETIME_S } from '../../packages/isocast-client/src/binding.ts';
import type { BundleOffer, Challenges } from './challenge.ts';
import type { Ledger, ResultMemo } from './ledger.ts';
import type { PurchaseOutcome } from './outcomes.ts';
import type { PurchaseSettings } from './plane.ts';
import { inDoubtNote } from './reconcile.ts';
import type { SettleOutcome } from './settlers/settler.ts';
import { rowFields, type PaymentRow, type PaymentStore } from './store.ts';
import { verifyPayment } from './verify.ts';

/** A buyer's header being settled. `recovered`: its signature recovered locally to `from` just now. */
export type Retry = BundleOffer & {
  p: DecodedPayment;
  recovered?: boolean;
  bindingK?: number;
  memo?: ResultMemo;
  /** The payment identifier as stored: its keyed hash (payment-identifier.ts). */
  idKey?: string;
};

/** The settle call for a claimed row, and the token contract's word when a settle went quiet or was cut off. */
export function createSettle(
  deps: Pick<PurchaseSettings, 'settler' | 'clock' | 'logger' | 'payTo' | 'usdc' | 'chainVerifier'> & {
    store: PaymentStore;
    ledger: Ledger;
    challenges: Challenges;
    inDoubt: PurchaseOutcome;
  },
) {
  const { settler, store, ledger, clock, logger, inDoubt } = deps;

  /** One settle call for a claimed row. `fresh`: nothing of this authorization was public before. */
  async function settleClaimed(
    r: Retry,
    claimed: { id: number; payer: Address; fresh: boolean },
  ): Promise<PurchaseOutcome> {
    const { id, payer, fresh } = claimed;
    let outcome: SettleOutcome;
    try {
      outcome = await settler.settle({
        payer,
        authorization: r.p.authorization,
        signature: r.p.signature,
        requirements: deps.challenges.requirements(r, r.p.network),
        listing: deps.challenges.listing(r.resourcePath),
        signatureRecovered: r.recovered === true,
        fresh,
      });
    } catch (err) {
      const nonce = r.p.authorization.nonce;
      logger.error('settler threw', { paymentId: id, payer, nonce, settler: settler.kind, err });
      outcome = { ok: false, inDoubt: true, reason: `settler error: ${(err as Error).message}` };
    }
    if (outcome.ok)
      return ledger.recordAndApply(id, outcome.txHash, { withReceipt: fresh && !outcome.alreadySettled, memo: r.memo });
    const fields = {
      paymentId: id,
      payer,
      nonce: r.p.authorization.nonce,
      city: r.city,
      count: r.count,
      settler: settler.kind,
      txHash: outcome.txHash ?? null,
      reason: outcome.reason,
    };
    if (outcome.inDoubt) {
      const note = inDoubtNote(outcome);
      store.markInDoubt(id, note, clock.now());
      logger.error('settlement in doubt; the token contract will decide', { ...fields, reason: note });
      return inDoubt;
    }
    store.markFailed(id, outcome.reason, clock.now());
    logger.warn('settlement failed; not charged', fields);
    return { kind: 'failed', reason: outcome.reason };
  }

  /** The token contract's word on a claimed or in-doubt row (docs/payments.md "Reconciliation"). */
  async function resolve(row: PaymentRow, retry: Retry | null): Promise<PurchaseOutcome> {
    const nowMs = clock.now();
    if (row.status === 'claimed') store.markInDoubt(row.id, 'settle attempt cut off', nowMs);
    const st = await settler.status(row.payer as Address, row.nonce as Hex, {
      // Rows written before 0006 have no valid_before: the longest lifetime from the claim bounds it.
      validBefore: row.valid_before ?? Math.floor(row.created_at / 1000) + MAX_AUTH_LIFETIME_S,
      payTo: deps.payTo,
      value: BigInt(row.amount_micro),
    });
    const fields = rowFields(row);
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
    const priceMicro = bundlePrice(retry.count).totalMicro;
    const v = await verifyPayment(retry.p, { ...deps, priceMicro, nowSeconds: Math.floor(clock.now() / 1000) });
    if (!v.ok || v.payer !== row.payer) return inDoubt;
    if (!store.reclaim(row.id, settler.kind, clock.now())) return ledger.answer(store.get(row.id)!);
    return settleClaimed({ ...retry, recovered: v.recovered }, { id: row.id, payer: v.payer, fresh: false });
  }

  return { settleClaimed, resolve };
}
