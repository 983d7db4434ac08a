import { ApiError } from './errors.ts';

/**
 * Every error the API answers, written once: a stable machine `code`, the status and the exact
 * message. `spec: true` marks spec section 7's own strings (verbatim); the rest are the service's
 * documented extensions (docs/errors.md, one row per code; test/lib/api-errors.test.ts holds both
 * lists to their sources). `<name>` in a message is filled by the constructor.
 */
export const ERRORS = {
  // Spec section 7.
  invalid_count: { status: 400, message: 'count must be an integer of at least 2', spec: true },
  min_spend: { status: 400, message: 'minimum spend is 0.01 USDC', spec: true },
  stale_timestamp: { status: 401, message: 'stale timestamp', spec: true },
  signature_verification_failed: { status: 401, message: 'signature verification failed', spec: true },
  payment_verification_failed: {
    status: 402,
    message: 'payment verification failed — you were not charged',
    spec: true,
  },
  binding_mismatch: {
    status: 402,
    message: 'payment binding mismatch: nonce must bind (payer, city, count)',
    spec: true,
  },
  settlement_failed: { status: 402, message: 'settlement failed — you were not charged', spec: true },
  sanctioned: { status: 403, message: 'wallet is sanctioned; payment refused', spec: true },
  unknown_city: { status: 404, message: 'unknown city', spec: true },
  entitlement_failed: { status: 502, message: 'entitlement update failed after payment', spec: true },
  screening_unavailable: { status: 503, message: 'sanctions screening unavailable', spec: true },
  // Extensions: spec 7 names the condition but not the string, or the service adds the case.
  field_required: { status: 400, message: '<field> is required', spec: false },
  invalid_field: { status: 400, message: '<rule>', spec: false },
  chat_id_required: { status: 400, message: 'chatId is required when action is set', spec: false },
  invalid_json_body: { status: 400, message: 'request body must be a JSON object', spec: false },
  invalid_query: { status: 400, message: 'invalid query parameter <name>: <problem>', spec: false },
  count_too_large: { status: 400, message: 'count must be at most <max>', spec: false },
  invalid_since: { status: 400, message: 'since must be an integer of at least 0', spec: false },
  city_required: { status: 400, message: 'city is required', spec: false },
  invalid_wait: { status: 400, message: 'wait must be an integer from 0 to <max> (seconds)', spec: false },
  admin_token_required: { status: 401, message: 'admin token required', spec: false },
  receipt_token_required: {
    status: 401,
    message: 'receipt token required: Authorization: Bearer <receiptToken>',
    spec: false,
  },
  receipt_expired: {
    status: 401,
    message: 'receipt token expired; sign a ReceiptRequest and POST /v1/receipts for a new one (free, no payment)',
    spec: false,
  },
  signature_already_used: { status: 401, message: 'signature already used', spec: false },
  exhausted: { status: 402, message: 'paid signals exhausted; buy more to continue', spec: false },
  already_applied: {
    status: 402,
    message:
      'payment already applied; an X-Payment reads only in the request that settled it: read with Authorization: Bearer <receiptToken>',
    spec: false,
  },
  no_purchases: { status: 404, message: 'no purchases for this wallet', spec: false },
  request_in_progress: {
    status: 409,
    message: 'the same signed request is already being processed',
    spec: false,
  },
  payment_identifier_conflict: {
    status: 409,
    message:
      'payment identifier already used with a different payment; use a new id for a new payment, or resend the same payment',
    spec: false,
  },
  siwx_refused: { status: 401, message: '<sign-in-with-x refusal>', spec: false },
  siwx_unverifiable: {
    status: 503,
    message: 'sign-in-with-x could not be verified on chain; retry shortly',
    spec: false,
  },
  rate_limited: { status: 429, message: 'rate limit exceeded; retry later', spec: false },
  test_message_failed: { status: 502, message: 'test message failed', spec: false },
  settlement_pending: {
    status: 503,
    message: 'settlement pending — retry the same X-Payment; you will not be charged twice',
    spec: false,
  },
  shutting_down: { status: 503, message: 'server shutting down; send the same request again shortly', spec: false },
  too_many_waiting: {
    status: 503,
    message: 'too many reads waiting for signals; retry after Retry-After seconds',
    spec: false,
  },
  replica_lagging: {
    status: 503,
    message: 'this read node is behind the primary; retry after Retry-After seconds',
    spec: false,
  },
  primary_unreachable: {
    status: 502,
    message: 'the primary did not answer in time; send the same request again (a payment settles at most once)',
    spec: false,
  },
} as const satisfies Record<string, { status: number; message: string; spec: boolean }>;

export type ErrorCode = keyof typeof ERRORS;

/** The message of `code`, with each `<name>` replaced from `fill`. */
export function errorMessage(code: ErrorCode, fill: Record<string, string | number> = {}): string {
  return ERRORS[code].message.replace(/<(\w+)>/g, (all, name: string) => (name in fill ? String(fill[name]) : all));
}

function build(
  code: ErrorCode,
  extra: Record<string, unknown> = {},
  more: { headers?: Record<string, string>; message?: string } = {},
): ApiError {
  const message = more.message ?? ERRORS[code].message;
  return new ApiError({ code, status: ERRORS[code].status, message, extra, headers: more.headers });
}

/** `extra` and a Retry-After header in whole seconds, as every "retry later" answer carries. */
const retryLater = (code: ErrorCode, retryAfterSeconds: number) =>
  build(code, { retryAfterSeconds }, { headers: { 'retry-after': String(retryAfterSeconds) } });

/** `reason` only when there is one (the body lists no `reason: undefined`). */
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
export const fieldRequired = (field: string) =>
  build('field_required', {}, { message: errorMessage('field_required', { field }) });
/** A field that is present but breaks its rule; `rule` is the caller's per-field message. */
export const invalidField = (rule: string) => build('invalid_field', {}, { message: rule });
export const chatIdRequired = () => build('chat_id_required');
export const invalidJsonBody = () => build('invalid_json_body');
/** `name` may be empty (a problem with the query as a whole). */
export const invalidQuery = (name: string, problem: string) =>
  build('invalid_query', {}, { message: `invalid query parameter ${name}: ${problem}`.replace(' :', ':') });
export const countTooLarge = (max: number, minSpendUsd: number) =>
  build('count_too_large', { minSpendUsd }, { message: errorMessage('count_too_large', { max }) });
export const invalidSince = () => build('invalid_since');
export const cityRequired = () => build('city_required');
export const invalidWait = (max: number) =>
  build('invalid_wait', {}, { message: errorMessage('invalid_wait', { max }) });
export const adminTokenRequired = () =>
  build('admin_token_required', {}, { headers: { 'www-authenticate': 'Bearer' } });
export const receiptTokenRequired = () =>
  build('receipt_token_required', {}, { headers: { 'www-authenticate': 'Bearer' } });
export const receiptExpired = () =>
  build('receipt_expired', {}, { headers: { 'www-authenticate': 'Bearer error="invalid_token"' } });
export const signatureAlreadyUsed = () => build('signature_already_used');
/**
 * A 402 that is a PaymentRequired challenge (`exhausted` or `already_applied`): the body is the
 * challenge, whose `error` is the catalog's message for `code`.
 */
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
/**
 * A refused SIGN-IN-WITH-X header: `error` is its message (payments/siwx.ts), and the body's own
 * `code` field is the x402 library's invalidReason (`invalid_siwx_*`), so a stock client matches it.
 */
export const siwxRefused = (r: { error: string; code: string; reason?: string }) =>
  build('siwx_refused', { code: r.code, ...(r.reason ? { reason: r.reason } : {}) }, { message: r.error });
/** The chain client failed (not a bad signature): a retry may pass. */
export const siwxUnverifiable = (invalidReason: string) => build('siwx_unverifiable', { code: invalidReason });
export const rateLimited = (retryAfterSeconds: number) => retryLater('rate_limited', retryAfterSeconds);
export const testMessageFailed = (reason: string) => build('test_message_failed', { reason });
/** Outcome unknown (in doubt): the buyer retries the same header; the chain decides. */
export const settlementPending = (retryAfterSeconds: number) => retryLater('settlement_pending', retryAfterSeconds);
export const shuttingDown = (retryAfterSeconds: number) => retryLater('shutting_down', retryAfterSeconds);
export const tooManyWaiting = (retryAfterSeconds: number) => retryLater('too_many_waiting', retryAfterSeconds);
export const replicaLagging = (retryAfterSeconds: number, lagMs: number | null) =>
  build('replica_lagging', { retryAfterSeconds, lagMs }, { headers: { 'retry-after': String(retryAfterSeconds) } });
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

/**
 * The same refusal with more said beside it: body fields after the catalog's (the seed's fields
 * and message stay as they are) and headers over its own. Used to make a payment's 402 readable
 * by x402 clients (paywall/refusal.ts).
 */
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
