-- 0011 salt_steps
-- Each bundle's purchase steps for the binding salt, HMAC(secret, city | count | k | minute)
-- (src/payments/binding.ts, issue 24). payments.binding_k is the k whose salt a payment's nonce
-- is bound to (NULL: bound to no step). When a payment bound to the bundle's current k becomes
-- settled, the trigger adds step k + 1, stamped with the settlement time, in the same statement,
-- so k moves only with money that moved, and the next 402 serves a salt the payer has not used.
-- Only the newest 64 steps per bundle are tried or kept. Times in epoch ms.
ALTER TABLE payments ADD COLUMN binding_k INTEGER;
CREATE TABLE salt_steps (
  city  TEXT    NOT NULL,
  count INTEGER NOT NULL,
  k     INTEGER NOT NULL CHECK (k >= 1),
  since INTEGER NOT NULL,
  PRIMARY KEY (city, count, k)
) WITHOUT ROWID;
CREATE TRIGGER salt_step AFTER UPDATE OF status ON payments
  WHEN NEW.status = 'settled' AND OLD.status IS NOT 'settled' AND NEW.binding_k IS NOT NULL
    AND NEW.binding_k = coalesce((SELECT max(k) FROM salt_steps WHERE city = NEW.city AND count = NEW.count), 0)
BEGIN
  INSERT INTO salt_steps (city, count, k, since) VALUES (NEW.city, NEW.count, NEW.binding_k + 1, NEW.updated_at);
  DELETE FROM salt_steps WHERE city = NEW.city AND count = NEW.count AND k <= NEW.binding_k + 1 - 64;
END;
