import { withMore } from '../lib/api-errors.ts';
import { ApiError } from '../lib/errors.ts';
import { NETWORK } from '../payments/eip3009.ts';
import type { PaymentRequiredBody } from '../payments/schemas.ts';
import { decodePaymentHeader, PAYMENT_REQUIRED, PAYMENT_RESPONSE, type PaymentHeader } from '../payments/x402-v2.ts';

/**
 * A 402 that refuses a payment (binding, verification, settlement refused, ceiling exhausted,
 * issue 36 item 2) said the way an x402 client reads it: a fresh `PAYMENT-REQUIRED` with the
 * current offer (what to sign next), on v2 a `PAYMENT-RESPONSE` `{success: false, errorReason,
 * network, payer}` as the v2 HTTP transport answers a failed payment, and in the v1 body the
 * standard `x402Version` and `accepts` beside the seed's own fields and message (spec 7), so a
 * v1 client that retries reads the offer from the same body. errorReason is the catalog's
 * stable code (docs/errors.md); errorMessage is the body's `error` and `reason`.
 */
export type FreshChallenge = { body: PaymentRequiredBody; headers: Record<string, string> };

export function asPaymentRefusal(err: unknown, r: { header: PaymentHeader; fresh: () => FreshChallenge }): unknown {
  if (!(err instanceof ApiError) || err.status !== 402) return err;
  // An exhaustion or already-applied 402 is a challenge already: its offer is current.
  const offer = PAYMENT_REQUIRED in err.headers ? null : r.fresh();
  const headers = { ...offer?.headers };
  // An already-applied answer says its settlement (success: true) itself.
  if (r.header.version === 2 && !(PAYMENT_RESPONSE in err.headers))
    headers[PAYMENT_RESPONSE] = refusedResponse(err, claimedPayer(r.header));
  const extra = offer ? { x402Version: offer.body.x402Version, accepts: offer.body.accepts } : {};
  return withMore(err, { extra, headers });
}

/** The payer the authorization names (the signature may not have been checked yet), or null. */
function claimedPayer(h: PaymentHeader): string | null {
  const d = decodePaymentHeader(h);
  return d.ok ? d.value.authorization.from : null;
}

function refusedResponse(err: ApiError, payer: string | null): string {
  const reason = typeof err.extra.reason === 'string' ? `: ${err.extra.reason}` : '';
  const response = {
    success: false,
    errorReason: err.code,
    errorMessage: `${err.message}${reason}`,
    transaction: '',
    network: NETWORK,
    ...(payer ? { payer } : {}),
  };
  return Buffer.from(JSON.stringify(response), 'utf8').toString('base64');
}
