import { ApiError } from './errors.ts';

/** Every error the API answers, once: spec section 7's strings verbatim, then the service's (docs/errors.md). */
const SPEC_7 = {
  invalid_count: [400, 'count must be an integer of at least 2'],
  min_spend: [400, 'minimum spend is 0.01 USDC'],
  stale_timestamp: [401, 'stale timestamp'],
  signature_verification_failed: [401, 'signature verification failed'],
  payment_verification_failed: [402, 'payment verification failed — you were not charged'],
  binding_mismatch: [402, 'payment binding mismatch: nonce must bind (payer, city, count)'],
  settlement_failed: [402, 'settlement failed — you were not charged'],
  sanctioned: [403, 'wallet is sanctioned; payment refused'],
  unknown_city: [404, 'unknown city'],
  entitlement_failed: [502, 'entitlement update failed after payment'],
  screening_unavailable: [503, 'sanctions screening unavailable'],
} as const;

/** Spec 7 names the condition but not the string, or the service adds the case. */
const EXTENSIONS = {
  field_required: [400, '<field> is required'],
  invalid_field: [400, '<rule>'],
  chat_id_required: [400, 'chatId is required when action is set'],
  invalid_json_body: [400, 'request body must be a JSON object'],
  invalid_query: [400, 'invalid query parameter <name>: <problem>'],
  count_too_large: [400, 'count must be at most <max>'],
  invalid_since: [400, 'since must be an integer of at least 0'],
  city_required: [400, 'city is required'],
  invalid_wait: [400, 'wait must be an integer from 0 to <max> (seconds)'],
  admin_token_required: [401, 'admin token required'],
  receipt_token_required: [401, 'receipt token required: Authorization: Bearer <receiptToken>'],
  receipt_expired: [
    401,
    'receipt token expired; sign a ReceiptRequest and POST /v1/receipts for a new one (free, no payment)',
  ],
  signature_already_used: [401, 'signature already used'],
  exhausted: [402, 'paid signals exhausted; buy more to continue'],
  already_applied: [
    402,
    'payment already applied; an X-Payment reads only in the request that settled it: read with Authorization: Bearer <receiptToken>',
  ],
  no_purchases: [404, 'no purchases for this wallet'],
  request_in_progress: [409, 'the same signed request is already being processed'],
  payment_identifier_conflict: [
    409,
    'payment identifier already used with a different payment; use a new id for a new payment, or resend the same payment',
  ],
  siwx_refused: [401, '<sign-in-with-x refusal>'],
  siwx_unverifiable: [503, 'sign-in-with-x could not be verified on chain; retry shortly'],
  rate_limited: [429, 'rate limit exceeded; retry later'],
  test_message_failed: [502, 'test message failed'],
  settlement_pending: [503, 'settlement pending — retry the same X-Payment; you will not be charged twice'],
  shutting_down: [503, 'server shutting down; send the same request again shortly'],
  starting: [503, 'server starting; send the same request again shortly'],
  too_many_waiting: [503, 'too many reads waiting for signals; retry after Retry-After seconds'],
  replica_lagging: [503, 'this read node is behind the primary; retry after Retry-After seconds'],
  primary_unreachable: [
    502,
    'the primary did not answer in time; send the same request again (a payment settles at most once)',
  ],
} as const;

function entries<T extends Record<string, readonly [number, string]>>(rows: T, source: { spec: boolean }) {
  const out = Object.entries(rows).map(([code, [status, message]]) => [code, { status, message, spec: source.spec }]);
  return Object.fromEntries(out) as { [K in keyof T]: { status: T[K][0]; message: T[K][1]; spec: boolean } };
}

export const ERRORS = { ...entries(SPEC_7, { spec: true }), ...entries(EXTENSIONS, { spec: false }) };

type ErrorCode = keyof typeof ERRORS;

function build(
  code: ErrorCode,
  extra: Record<string, unknown> = {},
  more: { headers?: Record<string, string>; message?: string; fill?: Record<string, string | number> } = {},
): ApiError {
  const { fill } = more;
  const text = ERRORS[code].message;
  const message =
    more.message ?? (fill ? text.replace(/<(\w+)>/g, (all, name: string) => String(fill[name] ?? all)) : text);
  return new ApiError({ code, status: ERRORS[code].status, message, extra, headers: more.headers });
}

const retryLater = (code: ErrorCode, retryAfterSeconds: number, extra: Record<string, unknown> = {}) =>
  build(code, { retryAfterSeconds, ...extra }, { headers: { 'retry-after': String(retryAfterSeconds) } });
const bearerChallenge = (code: ErrorCode, challenge = 'Bearer') =>
  build(code, {}, { headers: { 'www-authenticate': challenge } });

const withReason = (reason: string | undefined) => (reason === undefined ? {} : { reason });

// Spec section 7.
export const invalidCount = (minSpendUsd: number) => build('invalid_count', { minSpendUsd });
export const minSpend = (minSpendUsd: number) => build('min_spend', { minSpendUsd });
export const staleTimestamp = () => build('stale_timestamp');
export const signatureVerificationFailed = (reason?: string) =>
  build('signature_verification_failed', withReason(reason));
export const paymentVerificationFailed = (reason: string) => build('payment_verification_failed', { reason });
export const bindingMismatch = (reason?: string) => build('binding_mismatch', withReason(reason));
export const settlementFailed = (reason: string) => build('settlement_failed', { reason });
export const sanctioned = (reason?: string) => build('sanctioned', withReason(reason));
export const unknownCity = (reason?: string) => build('unknown_city', withReason(reason));
/** Charged, but the entitlement failed: the refund is queued (reconcile pays it back). */
export const entitlementFailed = () => build('entitlement_failed', { refund: 'queued' });
export const screeningUnavailable = () => build('screening_unavailable');

// Extensions.
export const fieldRequired = (field: string) => build('field_required', {}, { fill: { field } });
/** A field that is present but breaks its rule; `rule` is the caller's per-field message. */
export const invalidField = (rule: string) => build('invalid_field', {}, { message: rule });
export const chatIdRequired = () => build('chat_id_required');
export const invalidJsonBody = () => build('invalid_json_body');
/** `name` may be empty (a problem with the query as a whole). */
export const invalidQuery = (name: string, problem: string) =>
  build('invalid_query', {}, { message: `invalid query parameter ${name}: ${problem}`.replace(' :', ':') });
export const countTooLarge = (max: number, minSpendUsd: number) =>
  build('count_too_large', { minSpendUsd }, { fill: { max } });
export const invalidSince = () => build('invalid_since');
export const cityRequired = () => build('city_required');
export const invalidWait = (max: number) => build('invalid_wait', {}, { fill: { max } });
export const adminTokenRequired = () => bearerChallenge('admin_token_required');
export const receiptTokenRequired = () => bearerChallenge('receipt_token_required');
export const receiptExpired = () => bearerChallenge('receipt_expired', 'Bearer error="invalid_token"');
export const signatureAlreadyUsed = () => build('signature_already_used');
/** A 402 whose body is the PaymentRequired challenge; its `error` is the catalog's message for `code`. */
export function paymentRequired(
  code: 'exhausted' | 'already_applied',
  challenge: { error: string } & Record<string, unknown>,
  headers: Record<string, string>,
): ApiError {
  const { error, ...body } = challenge;
  return build(code, body, { headers, message: error });
}
export const noPurchases = () => build('no_purchases');
export const requestInProgress = () => build('request_in_progress');
export const paymentIdentifierConflict = () => build('payment_identifier_conflict');
/** The body's `code` is the x402 library's invalidReason (`invalid_siwx_*`), so a stock client matches it. */
export const siwxRefused = (r: { error: string; code: string; reason?: string }) =>
  build('siwx_refused', { code: r.code, ...(r.reason ? { reason: r.reason } : {}) }, { message: r.error });
/** The chain client failed (not a bad signature): a retry may pass. */
export const siwxUnverifiable = (invalidReason: string) => build('siwx_unverifiable', { code: invalidReason });
export const rateLimited = (retryAfterSeconds: number) => retryLater('rate_limited', retryAfterSeconds);
export const testMessageFailed = (reason: string) => build('test_message_failed', { reason });
/** Outcome unknown (in doubt): the buyer retries the same header; the chain decides. */
export const settlementPending = (retryAfterSeconds: number) => retryLater('settlement_pending', retryAfterSeconds);
export const shuttingDown = (retryAfterSeconds: number) => retryLater('shutting_down', retryAfterSeconds);
export const starting = (retryAfterSeconds: number) => retryLater('starting', retryAfterSeconds);
export const tooManyWaiting = (retryAfterSeconds: number) => retryLater('too_many_waiting', retryAfterSeconds);
export const replicaLagging = (retryAfterSeconds: number, lagMs: number | null) =>
  retryLater('replica_lagging', retryAfterSeconds, { lagMs });
export const primaryUnreachable = (reason: string) => build('primary_unreachable', { reason });

/** The payment plane's messages by short name (the tests' and llms-full.txt's list), taken from ERRORS. */
export const PAYMENT_ERRORS = {
  verify: ERRORS.payment_verification_failed.message,
  binding: ERRORS.binding_mismatch.message,
  settle: ERRORS.settlement_failed.message,
  sanctioned: ERRORS.sanctioned.message,
  screening: ERRORS.screening_unavailable.message,
  entitlement: ERRORS.entitlement_failed.message,
  count: ERRORS.invalid_count.message,
  minSpend: ERRORS.min_spend.message,
  pending: ERRORS.settlement_pending.message,
} as const;

/** The same refusal with more body fields after the catalog's and headers over its own (paywall/refusal.ts). */
export function withMore(
  err: ApiError,
  more: { extra?: Record<string, unknown>; headers?: Record<string, string> },
): ApiError {
  return new ApiError({
    code: err.code,
    status: err.status,
    message: err.message,
    extra: { ...err.extra, ...more.extra },
    headers: { ...err.headers, ...more.headers },
  });
}
