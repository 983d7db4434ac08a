import type { Address, Hex } from 'viem';
import type { Db } from '../db/open.ts';
import { MOCK_PAY_TO, payTo, type Config } from '../config.ts';
import type { Clock } from '../lib/clock.ts';
import { ApiError } from '../lib/errors.ts';
import type { Logger } from '../lib/logger.ts';
import type { Metrics } from '../lib/metrics.ts';
import { bundlePrice } from '../pricing/tiers.ts';
import type { SanctionsList } from '../sanctions/list.ts';
import { applyPurchase, entitlementOf } from '../entitlements/store.ts';
import { issueReceipt } from '../entitlements/receipts.ts';
import { matchBinding } from './binding.ts';
import { paymentRequired, type ChallengeInput } from './envelope.ts';
import { PAYMENT_ERRORS, bindingMismatch, refundQueued, sanctioned, screeningUnavailable, settleFailed, verifyFailed } from './errors.ts';
import type { PaymentRequiredBody } from './schemas.ts';
import type { PaymentRequirementsV1, SettleOutcome, Settler } from './settlers/settler.ts';
import { createPaymentStore, type PaymentRow } from './store.ts';
import { verifyPayment, type TypedDataVerifier } from './verify.ts';
import { decodeXPayment, type DecodedPayment } from './x-payment.ts';

/**
 * The purchase flow, in the spec's order (4.3): verify, sanctions screen, binding, claim,
 * settle, record, apply. Framework-free: routes hand it the header and the validated bundle.
 */
export type PaymentPlaneDeps = {
  db: Db;
  secret: Buffer;
  settler: Settler;
  sanctions: SanctionsList;
  ofacRequired: boolean;
  clock: Clock;
  logger: Logger;
  payTo: Address;
  usdc: Address;
  baseUrl: string;
  termsUrl: string;
  chainVerifier?: TypedDataVerifier;
  /** Purchase attempts by outcome and settled micro-USDC go here for /metrics. */
  metrics?: Metrics;
  /** Per-wallet abuse limit, called once the signature names the payer; throws a 429 ApiError. */
  limitPayer?: (payer: string) => void;
};

/** The `outcome` label of isocast_payments_total for each way a purchase can end. */
const OUTCOME_BY_ERROR: Record<string, string> = {
  [PAYMENT_ERRORS.verify]: 'verification_failed',
  [PAYMENT_ERRORS.binding]: 'binding_mismatch',
  [PAYMENT_ERRORS.settle]: 'settlement_failed',
  [PAYMENT_ERRORS.sanctioned]: 'sanctioned',
  [PAYMENT_ERRORS.screening]: 'screening_unavailable',
  [PAYMENT_ERRORS.entitlement]: 'entitlement_failed',
};

export function paymentOutcome(result: unknown): string {
  if (result instanceof ApiError) return OUTCOME_BY_ERROR[result.message] ?? 'rejected';
  if (result instanceof Error) return 'error';
  return (result as { idempotent: boolean }).idempotent ? 'idempotent' : 'settled';
}

export type Purchase = {
  payer: string;
  city: string;
  count: number;
  paymentId: number;
  txHash: string | null;
  idempotent: boolean;
  paidThroughSeq: number;
  totalPaidSignals: number;
  latestSeq: number;
  receiptToken: string | null;
};

export type PaymentPlane = ReturnType<typeof createPaymentPlane>;

export function createPaymentPlane(deps: PaymentPlaneDeps) {
  const { db, settler, logger, clock } = deps;
  const store = createPaymentStore(db);
  const latest = db.prepare('SELECT coalesce(max(seq), 0) FROM signals WHERE city = ?').pluck();
  // Attempts running in this process, so identical concurrent requests wait for the one that
  // claimed the row instead of reporting a half-finished state.
  const inflight = new Map<string, Promise<Purchase>>();
  const outcomes = deps.metrics?.counter('isocast_payments_total', 'Purchase attempts with an X-Payment header, by outcome');
  const settledMicro = deps.metrics?.counter('isocast_payments_settled_micro_usdc_total', 'Micro-USDC of payments newly settled and applied, by city');

  const challenge = (city: string, count: number, resourcePath: string, opts: Pick<ChallengeInput, 'error' | 'exhaustion'> = {}): PaymentRequiredBody =>
    paymentRequired({
      city, count, resource: `${deps.baseUrl}${resourcePath}`, payTo: deps.payTo, usdc: deps.usdc, secret: deps.secret,
      nowSeconds: Math.floor(clock.now() / 1000), termsUrl: deps.termsUrl, ...opts,
    });

  function requirements(city: string, count: number, resourcePath: string, network: string): PaymentRequirementsV1 {
    const { price: _price, ...accept } = challenge(city, count, resourcePath).accepts[0]!;
    return { ...accept, network };
  }

  function stateOf(row: PaymentRow, idempotent: boolean, withReceipt: boolean): Purchase {
    const ent = entitlementOf(db, row.payer, row.city);
    return {
      payer: row.payer, city: row.city, count: row.count, paymentId: row.id, txHash: row.tx_hash, idempotent,
      paidThroughSeq: ent?.paidThroughSeq ?? 0, totalPaidSignals: ent?.totalPaidSignals ?? 0,
      latestSeq: latest.get(row.city) as number,
      receiptToken: withReceipt ? issueReceipt(db, row.payer, row.id, clock.now()) : null,
    };
  }

  // One transaction: the payment leaves `settled`, the ceiling moves, the receipt is stored.
  const applyTx = db.transaction((id: number, nowMs: number, withReceipt: boolean): Purchase | null => {
    if (!store.markAppliedStmt(id, nowMs)) return null;
    const row = store.get(id)!;
    const ent = applyPurchase(db, { wallet: row.payer, city: row.city, count: row.count, nowMs });
    return {
      payer: row.payer, city: row.city, count: row.count, paymentId: id, txHash: row.tx_hash, idempotent: false,
      paidThroughSeq: ent.paidThroughSeq, totalPaidSignals: ent.totalPaidSignals, latestSeq: ent.latestSeq,
      receiptToken: withReceipt ? issueReceipt(db, row.payer, id, nowMs) : null,
    };
  });

  /** Applies a settled payment exactly once; a failure queues a refund and answers 502. */
  function apply(id: number, withReceipt: boolean): Purchase {
    const nowMs = clock.now();
    let applied: Purchase | null;
    try {
      applied = applyTx(id, nowMs, withReceipt);
    } catch (err) {
      store.queueRefund(id, `entitlement update failed: ${(err as Error).message}`, nowMs);
      const row = store.get(id);
      logger.error('entitlement update failed after payment; refund queued', { paymentId: id, payer: row?.payer, city: row?.city, txHash: row?.tx_hash, err });
      throw refundQueued();
    }
    const row = store.get(id)!;
    if (!applied) {
      if (row.status === 'refund_queued') throw refundQueued();
      return stateOf(row, true, withReceipt);
    }
    logger.info('payment applied', { paymentId: id, payer: row.payer, city: row.city, count: row.count, txHash: row.tx_hash, settler: row.settler, paidThroughSeq: applied.paidThroughSeq });
    return applied;
  }

  /** Records the settlement's hash, then applies. A hash another payment holds is that payment. */
  function recordAndApply(id: number, txHash: Hex, withReceipt: boolean): Purchase {
    const nowMs = clock.now();
    try {
      store.markSettled(id, txHash.toLowerCase(), nowMs);
    } catch (err) {
      const other = store.byTxHash(txHash.toLowerCase());
      if (!other) throw err;
      // One EIP-3009 transfer settles one authorization and each authorization has one row, so a
      // hash another row holds is a settler fault (or a lie). Answering with that row's state
      // would hand this payer the other wallet's receipt.
      const reason = `settlement ${txHash} already belongs to another payment`;
      store.markFailed(id, reason, nowMs);
      logger.error('settler returned a transaction hash held by another payment', { paymentId: id, otherPaymentId: other.id, txHash });
      throw settleFailed(reason);
    }
    return apply(id, withReceipt);
  }

  async function settleClaimed(id: number, p: DecodedPayment, payer: Address, city: string, count: number, resourcePath: string): Promise<Purchase> {
    let outcome: SettleOutcome;
    try {
      outcome = await settler.settle({
        payer, authorization: p.authorization, signature: p.signature, payload: p.payload,
        requirements: requirements(city, count, resourcePath, p.payload.network),
      });
    } catch (err) {
      outcome = { ok: false, reason: (err as Error).message };
    }
    if (!outcome.ok) {
      if (outcome.inDoubt) store.note(id, outcome.reason, clock.now());
      else store.markFailed(id, outcome.reason, clock.now());
      logger.warn('settlement failed', { paymentId: id, payer, city, count, settler: settler.kind, reason: outcome.reason, inDoubt: outcome.inDoubt === true });
      throw settleFailed(outcome.reason);
    }
    return recordAndApply(id, outcome.txHash, true);
  }

  async function claimAndSettle(p: DecodedPayment, payer: Address, city: string, count: number, resourcePath: string): Promise<Purchase> {
    const nonce = p.authorization.nonce;
    const claim = store.claim({ payer, nonce, city, count, amountMicro: bundlePrice(count).totalMicro, settler: settler.kind, nowMs: clock.now() });
    if (claim.claimed) return settleClaimed(claim.id, p, payer, city, count, resourcePath);
    const row = claim.row;
    switch (row.status) {
      case 'applied': return stateOf(row, true, true);
      case 'refund_queued': throw refundQueued();
      case 'settled': return apply(row.id, true);
      case 'claimed': {
        // No attempt runs in this process, so an earlier one was interrupted: find out whether
        // it moved money before trying again.
        const found = await settler.lookup(payer, nonce);
        if ('found' in found && found.found) return recordAndApply(row.id, found.found, true);
        break;
      }
      case 'failed': break;
    }
    if (!store.reclaim(row.id, settler.kind, clock.now())) return stateOf(store.get(row.id)!, true, true);
    return settleClaimed(row.id, p, payer, city, count, resourcePath);
  }

  return {
    challenge,
    store,
    apply,
    recordAndApply,

    /** The whole paid flow for one X-Payment header and an already validated (city, count). */
    async purchase(header: string, city: string, count: number, resourcePath: string): Promise<Purchase> {
      try {
        const p = await purchaseOnce(header, city, count, resourcePath);
        outcomes?.inc({ outcome: paymentOutcome(p) });
        if (!p.idempotent) settledMicro?.inc({ city: p.city }, bundlePrice(p.count).totalMicro);
        return p;
      } catch (err) {
        outcomes?.inc({ outcome: paymentOutcome(err) });
        throw err;
      }
    },
  };

  async function purchaseOnce(header: string, city: string, count: number, resourcePath: string): Promise<Purchase> {
    const decoded = decodeXPayment(header);
    if (!decoded.ok) throw verifyFailed(decoded.reason);
    const p = decoded.value;
    const nowSeconds = Math.floor(clock.now() / 1000);
    const verified = await verifyPayment(p, {
      usdc: deps.usdc, payTo: deps.payTo, priceMicro: bundlePrice(count).totalMicro, nowSeconds, chainVerifier: deps.chainVerifier,
    });
    if (!verified.ok) throw verifyFailed(verified.reason);
    const payer = verified.payer;
    deps.limitPayer?.(payer);
    if (deps.sanctions.has(payer)) {
      logger.warn('sanctioned payer refused', { payer, city, count });
      throw sanctioned();
    }
    if (!deps.sanctions.available(deps.ofacRequired)) throw screeningUnavailable();
    const bound = matchBinding(deps.secret, { payer, city, count, nonce: p.authorization.nonce, nowSeconds, validBefore: Number(p.authorization.validBefore) });
    if (bound === null) throw bindingMismatch();

    const key = `${payer}:${p.authorization.nonce}`;
    const running = inflight.get(key);
    if (running) {
      const first = await running;
      return stateOf(store.get(first.paymentId)!, true, true);
    }
    const attempt = claimAndSettle(p, payer, city, count, resourcePath);
    inflight.set(key, attempt);
    try {
      return await attempt;
    } finally {
      inflight.delete(key);
    }
  }
}


/** The plane as configured: effective settlement wallet, USDC address, public addresses. */
export function paymentPlaneFor(d: {
  config: Config; db: Db; secret: Buffer; settler: Settler; sanctions: SanctionsList; clock: Clock; logger: Logger; chainVerifier?: TypedDataVerifier; metrics?: Metrics;
  limitPayer?: (payer: string) => void;
}): PaymentPlane {
  return createPaymentPlane({
    db: d.db, secret: d.secret, settler: d.settler, sanctions: d.sanctions, ofacRequired: d.config.OFAC_REQUIRED, clock: d.clock,
    logger: d.logger, payTo: (payTo(d.config) ?? MOCK_PAY_TO) as Address, usdc: d.config.USDC_ADDRESS as Address,
    baseUrl: d.config.BASE_URL, termsUrl: d.config.TERMS_URL, chainVerifier: d.chainVerifier, metrics: d.metrics, limitPayer: d.limitPayer,
  });
}
