-- Chat registrations for pushed signals: one per wallet (lowercase 0x address). city NULL means
-- every city the wallet is entitled to.
CREATE TABLE delivery_registrations (
  wallet     TEXT    NOT NULL PRIMARY KEY,
  chat_id    TEXT    NOT NULL,
  city       TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) WITHOUT ROWID;

-- EIP-712 digests of accepted registration requests, so a signed body works once. A digest can
-- only be replayed while its timestamp is within the 600 s skew window, so rows are pruned after
-- expires_at (unix seconds).
CREATE TABLE delivery_signatures (
  digest     TEXT    NOT NULL PRIMARY KEY,
  wallet     TEXT    NOT NULL,
  used_at    INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX delivery_signatures_expiry ON delivery_signatures (expires_at);

-- Push outbox: at most one row per (wallet, city, day, bucket), queued in the transaction that
-- stores the signal. status: queued -> sending (committed before the network call) -> sent, or
-- -> queued again only after a failure known to precede the platform accepting the message, or
-- -> failed. A row found in `sending` at start-up is failed, never resent. Times in epoch ms.
CREATE TABLE delivery_outbox (
  id              INTEGER PRIMARY KEY,
  wallet          TEXT    NOT NULL,
  city            TEXT    NOT NULL,
  target_date     TEXT    NOT NULL,
  bucket          TEXT    NOT NULL,
  seq             INTEGER NOT NULL,
  status          TEXT    NOT NULL CHECK (status IN ('queued', 'sending', 'sent', 'failed')),
  attempts        INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER NOT NULL,
  chat_id         TEXT,
  last_error      TEXT,
  created_at      INTEGER NOT NULL,
  updated_at      INTEGER NOT NULL,
  UNIQUE (wallet, city, target_date, bucket)
);
CREATE INDEX delivery_outbox_queued ON delivery_outbox (next_attempt_at) WHERE status = 'queued';
