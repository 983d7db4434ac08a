-- Payments: one row per (payer, nonce), claimed BEFORE any settle call so a replayed or
-- concurrent X-Payment can never settle twice. status: claimed -> settled -> applied, or
-- claimed -> failed (not charged; the same authorization may be retried), or
-- settled -> refund_queued (charged, entitlement could not be applied).
CREATE TABLE payments (
  id           INTEGER PRIMARY KEY,
  payer        TEXT    NOT NULL,
  nonce        TEXT    NOT NULL,
  city         TEXT    NOT NULL,
  count        INTEGER NOT NULL CHECK (count >= 2),
  amount_micro INTEGER NOT NULL CHECK (amount_micro > 0),
  settler      TEXT    NOT NULL,
  status       TEXT    NOT NULL CHECK (status IN ('claimed', 'settled', 'applied', 'failed', 'refund_queued')),
  tx_hash      TEXT    UNIQUE,
  error        TEXT,
  created_at   INTEGER NOT NULL,
  updated_at   INTEGER NOT NULL,
  UNIQUE (payer, nonce)
);
CREATE INDEX payments_open ON payments (status) WHERE status IN ('claimed', 'settled');

-- Entitlement ceiling per (wallet, city); wallet is the lowercase recovered payer address.
CREATE TABLE entitlements (
  wallet             TEXT    NOT NULL,
  city               TEXT    NOT NULL,
  paid_through_seq   INTEGER NOT NULL,
  total_paid_signals INTEGER NOT NULL,
  updated_at         INTEGER NOT NULL,
  PRIMARY KEY (wallet, city)
) WITHOUT ROWID;

-- Receipt bearer tokens: `isr_<selector>_<verifier>`. Only sha256(verifier) is stored; the
-- selector finds the row and the hash is compared in constant time.
CREATE TABLE receipts (
  selector      TEXT    NOT NULL PRIMARY KEY,
  verifier_hash BLOB    NOT NULL,
  wallet        TEXT    NOT NULL,
  payment_id    INTEGER NOT NULL REFERENCES payments (id),
  created_at    INTEGER NOT NULL
) WITHOUT ROWID;

-- Refunds owed for settled payments whose entitlement could not be applied. Processing them is
-- an operator task; the row is the durable promise.
CREATE TABLE refunds (
  id           INTEGER PRIMARY KEY,
  payment_id   INTEGER NOT NULL UNIQUE REFERENCES payments (id),
  wallet       TEXT    NOT NULL,
  amount_micro INTEGER NOT NULL,
  tx_hash      TEXT,
  reason       TEXT    NOT NULL,
  status       TEXT    NOT NULL DEFAULT 'queued',
  created_at   INTEGER NOT NULL
);
