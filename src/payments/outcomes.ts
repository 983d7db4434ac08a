import type { ApiError } from '../lib/errors.ts';
import type { Metrics } from '../lib/metrics.ts';
import { bundlePrice } from '../../packages/isocast-client/src/pricing.ts';
import type { Purchase } from './ledger.ts';

/** Why a payment was refused before anything moved; `limited` is the per-wallet limit's own 429. */
type Refusal =
  | { why: 'shutting_down' | 'two_headers' | 'identifier_conflict' | 'sanctioned' | 'screening_unavailable' }
  | { why: 'binding_mismatch' | 'bound_elsewhere' }
  | { why: 'verification_failed'; reason: string }
  | { why: 'exhausted'; paidThrough: number; latest: number }
  | { why: 'limited'; error: ApiError };

/** `known`: applied, answered again; `in_doubt`: resend the header; `failed`: not charged; `refunded`: refund queued */
export type PurchaseOutcome =
  | { kind: 'applied'; purchase: Purchase }
  | { kind: 'known'; purchase: Purchase }
  | { kind: 'in_doubt'; retryAfterSeconds: number }
  | { kind: 'refused'; refusal: Refusal }
  | { kind: 'failed'; reason: string }
  | { kind: 'refunded' };

export const refused = (refusal: Refusal): PurchaseOutcome => ({ kind: 'refused', refusal });

const REFUSAL_LABEL: Partial<Record<Refusal['why'], string>> = {
  verification_failed: 'verification_failed',
  binding_mismatch: 'binding_mismatch',
  bound_elsewhere: 'binding_mismatch',
  sanctioned: 'sanctioned',
  screening_unavailable: 'screening_unavailable',
};

const KIND_LABEL: Record<Exclude<PurchaseOutcome['kind'], 'refused'>, string> = {
  applied: 'settled',
  known: 'idempotent',
  in_doubt: 'in_doubt',
  failed: 'settlement_failed',
  refunded: 'entitlement_failed',
};

/** The `outcome` label of isocast_payments_total; a purchase that threw is `error`. */
const paymentOutcome = (o: PurchaseOutcome): string =>
  o.kind === 'refused' ? (REFUSAL_LABEL[o.refusal.why] ?? 'rejected') : KIND_LABEL[o.kind];

/** The plane's /metrics counters; without a registry (unit tests) they are no-ops. */
export function paymentCounters(metrics: Metrics | undefined) {
  const outcomes = metrics?.counter('isocast_payments_total', 'Purchase attempts with an X-Payment header, by outcome');
  const settledMicro = metrics?.counter(
    'isocast_payments_settled_micro_usdc_total',
    'Micro-USDC of payments newly settled and applied, by city',
  );
  const commits = metrics?.counter('isocast_payment_commits_total', 'SQLite commits of payment writes (group commits)');
  const units = metrics?.counter(
    'isocast_payment_commit_units_total',
    'Payment writes (claims, settlements applied) those commits carried',
  );
  return {
    committed: (n: number) => {
      commits?.inc();
      units?.inc({}, n);
    },
    attempt: (o: PurchaseOutcome | 'error') => outcomes?.inc({ outcome: o === 'error' ? 'error' : paymentOutcome(o) }),
    /** A payment newly applied: its amount counts as settled revenue. */
    applied: (o: PurchaseOutcome) => {
      if (o.kind === 'applied') settledMicro?.inc({ city: o.purchase.city }, bundlePrice(o.purchase.count).totalMicro);
    },
  };
}
