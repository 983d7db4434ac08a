-- 0015 payment_identifier (issue 28 item 3)
-- The x402 `payment-identifier` id a v2 payment came with (its idempotency key, 16-128 characters,
-- src/payments/payment-identifier.ts): one payment per id, so a second payment with the same id is
-- refused (409) and the same payment again answers its stored result. `result` is that answer of
-- the request whose settlement moved the money, written in the apply's own transaction and sealed
-- with the server secret (it holds the receipt token). Both live and die with their payment row:
-- the retention job's prune of failed payments deletes them with it.
ALTER TABLE payments ADD COLUMN payment_identifier TEXT;
ALTER TABLE payments ADD COLUMN result TEXT;
CREATE UNIQUE INDEX payments_identifier ON payments (payment_identifier) WHERE payment_identifier IS NOT NULL;
