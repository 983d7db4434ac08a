/**
 * The x402 `payment-identifier` extension (@x402/extensions 2.27): a v2 buyer may send an `id`
 * (`extensions["payment-identifier"].info.id` of its PaymentPayload) as an idempotency key. The
 * same id with the same payment (the same authorization) answers the stored result of that
 * payment; the same id with another payment answers 409. The id is stored with its payment
 * (payments.payment_identifier, unique) and deleted with it. docs/payments.md, "Payment identifiers".
 *
 * The declaration and the id rule are the library's (test/payments/payment-identifier.test.ts
 * compares them with `declarePaymentIdentifierExtension` and `isValidPaymentId`); they are written
 * out here because importing @x402/extensions costs a start about 200 ms of zod 3 and ajv.
 */
export const PAYMENT_IDENTIFIER = 'payment-identifier';
export const PAYMENT_ID_MIN_LENGTH = 16;
export const PAYMENT_ID_MAX_LENGTH = 128;
const PAYMENT_ID_PATTERN = /^[a-zA-Z0-9_-]+$/;

export const PAYMENT_ID_RULE = `${PAYMENT_ID_MIN_LENGTH}-${PAYMENT_ID_MAX_LENGTH} characters of A-Z, a-z, 0-9, "-" and "_"`;

/** What the 402 declares: the id is optional (a v1 buyer, or a v2 one without the extension, pays as before). */
export function paymentIdentifierDeclaration() {
  return {
    info: { required: false },
    schema: {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: {
        required: { type: 'boolean' },
        id: {
          type: 'string',
          minLength: PAYMENT_ID_MIN_LENGTH,
          maxLength: PAYMENT_ID_MAX_LENGTH,
          pattern: PAYMENT_ID_PATTERN.source,
        },
      },
      required: ['required'],
    },
  };
}

export function isValidPaymentId(id: unknown): id is string {
  return (
    typeof id === 'string' &&
    id.length >= PAYMENT_ID_MIN_LENGTH &&
    id.length <= PAYMENT_ID_MAX_LENGTH &&
    PAYMENT_ID_PATTERN.test(id)
  );
}

export type PaymentIdResult = { ok: true; id: string | null } | { ok: false; reason: string };

/**
 * The id a v2 PaymentPayload's `extensions` carries, if any. The extension echoed without an id
 * (a client that copies the declaration and adds nothing) is no id; an id that breaks the rule is
 * refused rather than ignored, so a buyer never believes a retry is protected when it is not.
 */
export function paymentIdOf(extensions: Record<string, unknown> | undefined): PaymentIdResult {
  const ext = extensions?.[PAYMENT_IDENTIFIER];
  if (ext === undefined || ext === null) return { ok: true, id: null };
  const info = typeof ext === 'object' ? (ext as { info?: unknown }).info : undefined;
  if (!info || typeof info !== 'object') return { ok: false, reason: `extensions.${PAYMENT_IDENTIFIER}.info missing` };
  const id = (info as { id?: unknown }).id;
  if (id === undefined) return { ok: true, id: null };
  if (!isValidPaymentId(id))
    return { ok: false, reason: `extensions.${PAYMENT_IDENTIFIER}.info.id must be ${PAYMENT_ID_RULE}` };
  return { ok: true, id };
}
