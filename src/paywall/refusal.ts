import {
  bindingMismatch,
  entitlementFailed,
  invalidField,
  paymentIdentifierConflict,
  paymentVerificationFailed,
  sanctioned,
  screeningUnavailable,
  settlementFailed,
  settlementPending,
  shuttingDown,
  withMore,
} from '../lib/api-errors.ts';
import { ApiError } from '../lib/errors.ts';
import type { Purchase } from '../payments/ledger.ts';
import type { PurchaseOutcome } from '../payments/outcomes.ts';
import { NETWORK } from '../x402/networks.ts';
import type { PaymentRequiredBody } from '../payments/schemas.ts';
import { decodePaymentHeader, PAYMENT_REQUIRED, PAYMENT_RESPONSE, type PaymentHeader } from '../x402/v2.ts';

/** Where a wallet stands after the purchase it was refused: its ceiling and the latest seq. */
export type Standing = { paidThrough: number; latest: number };

/** The one place a purchase's outcome becomes HTTP: the Purchase, or the catalog's error thrown. */
export function purchaseOf(o: PurchaseOutcome, r: { version: 1 | 2; exhausted?: (s: Standing) => ApiError }): Purchase {
  switch (o.kind) {
    case 'applied':
    case 'known':
      return o.purchase;
    case 'in_doubt':
      throw settlementPending(o.retryAfterSeconds);
    case 'failed':
      throw settlementFailed(o.reason);
    case 'refunded':
      throw entitlementFailed();
  }
  const why = o.refusal;
  switch (why.why) {
    case 'shutting_down':
      throw shuttingDown(5);
    case 'two_headers':
      throw invalidField('send exactly one X-Payment or PAYMENT-SIGNATURE header (two were sent)');
    case 'verification_failed':
      throw paymentVerificationFailed(why.reason);
    case 'binding_mismatch':
      throw bindingMismatch();
    // v1 keeps the spec's body (its nonce cannot bind two bundles); v2 binds at first sight, so says why.
    case 'bound_elsewhere':
      throw bindingMismatch(
        r.version === 2
          ? 'this authorization already paid for another bundle (city, count); sign a new one for this request'
          : undefined,
      );
    case 'sanctioned':
      throw sanctioned();
    case 'screening_unavailable':
      throw screeningUnavailable();
    case 'identifier_conflict':
      throw paymentIdentifierConflict();
    case 'limited':
      throw why.error;
    case 'exhausted':
      if (!r.exhausted) throw new Error('an exhaustion refusal on a route that reads nothing');
      throw r.exhausted({ paidThrough: why.paidThrough, latest: why.latest });
  }
}

/** A refusing 402 as x402 clients read it: a fresh PAYMENT-REQUIRED, on v2 a failed PAYMENT-RESPONSE, v1 `accepts`. */
export type FreshChallenge = { body: PaymentRequiredBody; headers: Record<string, string> };

export function asPaymentRefusal(err: unknown, r: { header: PaymentHeader; fresh: () => FreshChallenge }): unknown {
  if (!(err instanceof ApiError) || err.status !== 402) return err;
  // An exhaustion or already-applied 402 is a challenge already: its offer is current.
  const offer = PAYMENT_REQUIRED in err.headers ? null : r.fresh();
  const headers = { ...offer?.headers };
  // An already-applied answer says its settlement (success: true) itself.
  if (r.header.version === 2 && !(PAYMENT_RESPONSE in err.headers))
    headers[PAYMENT_RESPONSE] = refusedResponse(err, decodePaymentHeader(r.header));
  const extra = offer ? { x402Version: offer.body.x402Version, accepts: offer.body.accepts } : {};
  return withMore(err, { extra, headers });
}

/** `payer`: the one the authorization names (its signature may not have been checked yet). */
function refusedResponse(err: ApiError, decoded: ReturnType<typeof decodePaymentHeader>): string {
  const reason = typeof err.extra.reason === 'string' ? `: ${err.extra.reason}` : '';
  const response = {
    success: false,
    errorReason: err.code,
    errorMessage: `${err.message}${reason}`,
    transaction: '',
    network: NETWORK,
    ...(decoded.ok ? { payer: decoded.value.authorization.from } : {}),
  };
  return Buffer.from(JSON.stringify(response), 'utf8').toString('base64');
}
