-- 0017 payment_identifier_keyed (issue 35 item 3)
-- payments.payment_identifier now holds a keyed hash of the buyer's id (HMAC under the server
-- secret, src/payments/payment-identifier.ts), never the id itself, so a copy of the database
-- holds nothing to replay a stored answer with. Ids stored in the clear before this version are
-- dropped with their stored answers: SQL cannot compute the hash, and kept in the clear they would
-- stay replayable from a copy. Such a payment answers its state like any known payment.
UPDATE payments SET payment_identifier = NULL, result = NULL WHERE payment_identifier IS NOT NULL;
