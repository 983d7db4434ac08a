/**
 * The x402 `payment-identifier` id (isocast answers it): an idempotency key a v2
 * payment may carry, `extensions["payment-identifier"].info.id`, 16-128 characters of A-Z, a-z,
 * 0-9, `-` and `_` (the rule of `@x402/extensions`). The same id with the same payment answers the
 * first answer again, receipt token included; the same id with another payment answers 409, so use
 * one new id per payment. The id is not on chain: keep it to yourself like the receipt token.
 */
export const PAYMENT_IDENTIFIER = 'payment-identifier';

const RULE = /^[A-Za-z0-9_-]{16,128}$/;

export function isValidPaymentId(id: unknown): id is string {
  return typeof id === 'string' && RULE.test(id);
}

/** A fresh id: `prefix` and 128 random bits in hex (`pay_3f…`, 36 characters by default). */
export function newPaymentId(prefix = 'pay_'): string {
  const id = `${prefix}${crypto.randomUUID().replaceAll('-', '')}`;
  if (!isValidPaymentId(id)) throw new RangeError(`payment id prefix ${JSON.stringify(prefix)} breaks the id rule`);
  return id;
}
