import { ApiError } from '../lib/errors.ts';
import type { Metrics } from '../lib/metrics.ts';
import { bundlePrice } from '../pricing/tiers.ts';
import { bindingMismatch, type ErrorCode } from '../lib/api-errors.ts';

/** The `outcome` label of isocast_payments_total for each way a purchase can end. */
const OUTCOME_BY_CODE: Partial<Record<ErrorCode, string>> = {
  payment_verification_failed: 'verification_failed',
  binding_mismatch: 'binding_mismatch',
  settlement_failed: 'settlement_failed',
  settlement_pending: 'in_doubt',
  sanctioned: 'sanctioned',
  screening_unavailable: 'screening_unavailable',
  entitlement_failed: 'entitlement_failed',
};

export function paymentOutcome(result: unknown): string {
  if (result instanceof ApiError) return OUTCOME_BY_CODE[result.code as ErrorCode] ?? 'rejected';
  if (result instanceof Error) return 'error';
  const p = result as { idempotent: boolean; replay?: unknown };
  // A payment identifier's stored answer repeats `idempotent: false`, but nothing moved now.
  return p.idempotent || p.replay ? 'idempotent' : 'settled';
}

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
    /** One group commit of `n` payment writes (db/group-commit.ts). */
    committed: (n: number) => {
      commits?.inc();
      units?.inc({}, n);
    },
    /** One purchase attempt ended with `result` (a Purchase or what was thrown). */
    attempt: (result: unknown) => outcomes?.inc({ outcome: paymentOutcome(result) }),
    /** A payment newly applied (not an idempotent answer): its amount counts as settled revenue. */
    applied: (p: { idempotent: boolean; replay?: unknown; city: string; count: number }) => {
      if (!p.idempotent && !p.replay) settledMicro?.inc({ city: p.city }, bundlePrice(p.count).totalMicro);
    },
  };
}

/**
 * The refusal of an authorization already bound to another bundle. v1 keeps the spec's body (its
 * nonce cannot bind two bundles); on v2 any nonce binds at first sight, so the body says why.
 */
export const boundElsewhere = (version: 1 | 2): ApiError =>
  bindingMismatch(
    version === 2
      ? 'this authorization already paid for another bundle (city, count); sign a new one for this request'
      : undefined,
  );
