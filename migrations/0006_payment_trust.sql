-- 0006 payment trust
-- `in_doubt`: a settlement whose outcome is not known for certain (timeout, 5xx, revert, a crash
-- mid-settle). It is never settled again blindly and never reported as not charged; only the
-- token's authorizationState(payer, nonce) resolves it. SQLite cannot alter a CHECK constraint,
-- so the table is rebuilt (migrate.ts runs migrations with foreign keys off and checks them
-- before committing). valid_before (unix seconds) lets the reconciler tell "unused and can never
-- land" from "unused but still valid". legacy_alter_table keeps the receipts and refunds
-- REFERENCES clauses naming `payments` while the old table is renamed away.
PRAGMA legacy_alter_table = ON;
ALTER TABLE payments RENAME TO payments_0005;
CREATE TABLE payments (
  id           INTEGER PRIMARY KEY,
  payer        TEXT    NOT NULL,
  nonce        TEXT    NOT NULL,
  city         TEXT    NOT NULL,
  count        INTEGER NOT NULL CHECK (count >= 2),
  amount_micro INTEGER NOT NULL CHECK (amount_micro > 0),
  settler      TEXT    NOT NULL,
  status       TEXT    NOT NULL CHECK (status IN ('claimed', 'settled', 'applied', 'failed', 'refund_queued', 'in_doubt')),
  tx_hash      TEXT    UNIQUE,
  error        TEXT,
  created_at   INTEGER NOT NULL,
  updated_at   INTEGER NOT NULL,
  valid_before INTEGER,
  UNIQUE (payer, nonce)
);
INSERT INTO payments (id, payer, nonce, city, count, amount_micro, settler, status, tx_hash, error, created_at, updated_at)
  SELECT id, payer, nonce, city, count, amount_micro, settler, status, tx_hash, error, created_at, updated_at FROM payments_0005;
DROP TABLE payments_0005;
PRAGMA legacy_alter_table = OFF;
CREATE INDEX payments_open ON payments (status) WHERE status IN ('claimed', 'settled', 'in_doubt');
CREATE INDEX payments_applied ON payments (created_at, city, amount_micro) WHERE status = 'applied';

-- Signed POST /v1/receipts requests already honoured: each (wallet, timestamp) mints one token,
-- whatever encoding of the signature carries it. Rows are pruned once the timestamp is stale.
CREATE TABLE receipt_requests (
  wallet     TEXT    NOT NULL,
  timestamp  INTEGER NOT NULL,
  used_at    INTEGER NOT NULL,
  PRIMARY KEY (wallet, timestamp)
) WITHOUT ROWID;
CREATE INDEX receipt_requests_time ON receipt_requests (timestamp);
