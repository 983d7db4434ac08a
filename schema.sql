-- isocast schema: the whole current schema. A new database is created from this file alone;
-- migrations/NNNN_*.sql step an older database forward and must end at the same schema
-- (test/db/migrate.test.ts compares the two).

-- 0001 foundation
-- Signals: one row per emitted signal. `payload` is the canonical public JSON (IsocastSignalPublic),
-- written once and served as-is, so reads never re-serialise an immutable record.
CREATE TABLE signals (
  city        TEXT    NOT NULL,
  seq         INTEGER NOT NULL CHECK (seq >= 1),
  target_date TEXT    NOT NULL,
  new_bucket  TEXT    NOT NULL,
  observed_at TEXT    NOT NULL,
  payload     TEXT    NOT NULL,
  created_at  INTEGER NOT NULL,
  reported_at TEXT,
  channel     TEXT,
  raw_report  TEXT,
  reported_value REAL,
  reported_unit  TEXT,
  reported_precision REAL,
  available_at TEXT,
  PRIMARY KEY (city, seq),
  UNIQUE (city, target_date, new_bucket)
) WITHOUT ROWID;

-- 0002 payments
-- Payments: one row per (payer, nonce), claimed BEFORE any settle call so a replayed or
-- concurrent X-Payment can never settle twice. status: claimed -> settled -> applied, or
-- claimed -> failed (not charged; the same authorization may be retried), or claimed -> in_doubt
-- (outcome unknown; resolved only from the chain, 0006), or
-- settled -> refund_queued (charged, entitlement could not be applied).
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
  binding_k    INTEGER,
  payment_identifier TEXT,
  result       TEXT,
  UNIQUE (payer, nonce)
);
CREATE INDEX payments_open ON payments (status) WHERE status IN ('claimed', 'settled', 'in_doubt');

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

-- 0003 delivery
-- Chat registrations for pushed signals: one per wallet (lowercase 0x address). city NULL means
-- every city the wallet is entitled to.
-- chat_id is the chat's canonical spelling (src/delivery/chat-id.ts; 0012 folded older rows).
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

-- 0004 signal_engine
-- Day state: per (city, city-local day) the highest resolved reading seen so far (whole degrees of
-- `unit`) and the bucket holding it. Written in the same transaction as any signal it causes, so a
-- restart resumes from exactly the committed high and never re-emits. Times in epoch ms.
CREATE TABLE day_state (
  city        TEXT    NOT NULL,
  target_date TEXT    NOT NULL,
  high        INTEGER NOT NULL,
  unit        TEXT    NOT NULL CHECK (unit IN ('C', 'F')),
  bucket      TEXT,
  created_at  INTEGER NOT NULL,
  updated_at  INTEGER NOT NULL,
  PRIMARY KEY (city, target_date)
) WITHOUT ROWID;

-- Anchor of the simulated feed's accelerated clock (FEED=sim): sim time =
-- sim_anchor_ms + (now - real_anchor_ms) * speed. Kept across restarts so simulated days only move
-- forward. One row.
CREATE TABLE sim_clock (
  id             INTEGER PRIMARY KEY CHECK (id = 1),
  real_anchor_ms INTEGER NOT NULL,
  sim_anchor_ms  INTEGER NOT NULL,
  speed          REAL    NOT NULL
);

-- 0005 operations
-- Indexes for the operator page and the scrape-time gauges, so both stay cheap as the tables grow:
-- revenue by day and the all-time total read only applied payments, from the index alone; the
-- entitlements are listed newest first.
CREATE INDEX payments_applied ON payments (created_at, city, amount_micro) WHERE status = 'applied';
CREATE INDEX entitlements_updated ON entitlements (updated_at);

-- 0006 payment trust
-- Signed POST /v1/receipts requests already honoured: each (wallet, timestamp) mints one token,
-- whatever encoding of the signature carries it. Rows are pruned once the timestamp is stale.
CREATE TABLE receipt_requests (
  wallet     TEXT    NOT NULL,
  timestamp  INTEGER NOT NULL,
  used_at    INTEGER NOT NULL,
  PRIMARY KEY (wallet, timestamp)
) WITHOUT ROWID;
CREATE INDEX receipt_requests_time ON receipt_requests (timestamp);

-- 0007 retention: indexes that keep the hot queries and the daily prune indexed at any size, and
-- row counters kept by triggers so the operator page and /metrics never count a growing table.

-- Enqueueing a signal finds the wallets still paid past its seq in that city from this index,
-- instead of reading every entitlement.
CREATE INDEX entitlements_city_paid ON entitlements (city, paid_through_seq);

-- The prune finds finished rows by age.
CREATE INDEX delivery_outbox_done ON delivery_outbox (updated_at) WHERE status IN ('sent', 'failed');
CREATE INDEX payments_failed ON payments (updated_at) WHERE status = 'failed';
CREATE INDEX receipts_created ON receipts (created_at);
-- receipts.payment_id references payments: without this index, deleting one failed payment makes
-- SQLite's foreign key check read every receipt.
CREATE INDEX receipts_payment ON receipts (payment_id);

-- name: 'outbox:<status>', 'entitlements', 'payments:applied' (micro = their amount_micro sum).
CREATE TABLE row_counts (
  name  TEXT    NOT NULL PRIMARY KEY,
  n     INTEGER NOT NULL,
  micro INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
INSERT INTO row_counts (name, n) SELECT 'outbox:' || s.status, (SELECT count(*) FROM delivery_outbox o WHERE o.status = s.status)
  FROM (SELECT 'queued' AS status UNION ALL SELECT 'sending' UNION ALL SELECT 'sent' UNION ALL SELECT 'failed') s;
INSERT INTO row_counts (name, n) SELECT 'entitlements', count(*) FROM entitlements;
INSERT INTO row_counts (name, n, micro) SELECT 'payments:applied', count(*), coalesce(sum(amount_micro), 0) FROM payments WHERE status = 'applied';

CREATE TRIGGER outbox_count_insert AFTER INSERT ON delivery_outbox BEGIN
  UPDATE row_counts SET n = n + 1 WHERE name = 'outbox:' || NEW.status;
END;
CREATE TRIGGER outbox_count_update AFTER UPDATE OF status ON delivery_outbox WHEN OLD.status IS NOT NEW.status BEGIN
  UPDATE row_counts SET n = n - 1 WHERE name = 'outbox:' || OLD.status;
  UPDATE row_counts SET n = n + 1 WHERE name = 'outbox:' || NEW.status;
END;
CREATE TRIGGER outbox_count_delete AFTER DELETE ON delivery_outbox BEGIN
  UPDATE row_counts SET n = n - 1 WHERE name = 'outbox:' || OLD.status;
END;
CREATE TRIGGER entitlements_count_insert AFTER INSERT ON entitlements BEGIN
  UPDATE row_counts SET n = n + 1 WHERE name = 'entitlements';
END;
CREATE TRIGGER entitlements_count_delete AFTER DELETE ON entitlements BEGIN
  UPDATE row_counts SET n = n - 1 WHERE name = 'entitlements';
END;
CREATE TRIGGER payments_applied_insert AFTER INSERT ON payments WHEN NEW.status = 'applied' BEGIN
  UPDATE row_counts SET n = n + 1, micro = micro + NEW.amount_micro WHERE name = 'payments:applied';
END;
CREATE TRIGGER payments_applied_update AFTER UPDATE OF status ON payments
  WHEN OLD.status IS NOT NEW.status AND 'applied' IN (OLD.status, NEW.status) BEGIN
  UPDATE row_counts SET n = n + (NEW.status = 'applied') - (OLD.status = 'applied'),
    micro = micro + (NEW.status = 'applied') * NEW.amount_micro - (OLD.status = 'applied') * OLD.amount_micro
    WHERE name = 'payments:applied';
END;
CREATE TRIGGER payments_applied_delete AFTER DELETE ON payments WHEN OLD.status = 'applied' BEGIN
  UPDATE row_counts SET n = n - 1, micro = micro - OLD.amount_micro WHERE name = 'payments:applied';
END;

-- 0008 resolution_rules
-- The resolution rule each city-day's market event states, parsed from its text (source, station,
-- unit, precision, fallback), and whether the service signals that day or pauses it. The rule seen
-- first is kept: a rule or observation feed that changes during the day pauses the day, so one
-- day's signals never mix sources. Times in epoch ms. `kind` (0010): which reports count and the
-- rounding (src/buckets/rule-kinds.ts); NULL for days recorded before 0010.
CREATE TABLE resolution_rules (
  city          TEXT    NOT NULL,
  target_date   TEXT    NOT NULL,
  source        TEXT    NOT NULL CHECK (source IN ('wu', 'noaa', 'hko', 'cwa', 'unknown')),
  station       TEXT,
  unit          TEXT    CHECK (unit IN ('C', 'F')),
  precision     REAL,
  fallback      TEXT,
  url           TEXT,
  parse_note    TEXT,
  status        TEXT    NOT NULL CHECK (status IN ('ok', 'paused')),
  pause_reason  TEXT,
  observed_with TEXT,
  first_seen_at INTEGER NOT NULL,
  updated_at    INTEGER NOT NULL,
  kind          TEXT    CHECK (kind IN ('noaa-hourly', 'noaa-all', 'wu-table', 'hko', 'cwa')),
  PRIMARY KEY (city, target_date)
) WITHOUT ROWID;
CREATE INDEX resolution_rules_paused ON resolution_rules (target_date) WHERE status = 'paused';

-- 0011 salt_steps
-- Each bundle's purchase steps for the binding salt, HMAC(secret, city | count | k | minute)
-- (src/payments/binding.ts, issue 24). payments.binding_k is the k whose salt a payment's nonce
-- is bound to (NULL: bound to no step). When a payment bound to the bundle's current k becomes
-- settled, the trigger adds step k + 1, stamped with the settlement time, in the same statement,
-- so k moves only with money that moved, and the next 402 serves a salt the payer has not used.
-- Only the newest 64 steps per bundle are tried or kept. Times in epoch ms.
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

-- 0013 discovered_events
-- The daily-high events the last discovery run found on Gamma (tag_slug=highest-temperature), each
-- with its parsed rule and whether its city is served; `reason` says why not. Replaced whole by
-- every run, so doctor and /admin show what the market lists now. Times in epoch ms.
CREATE TABLE discovered_events (
  slug        TEXT    NOT NULL PRIMARY KEY,
  city        TEXT    NOT NULL,
  target_date TEXT    NOT NULL,
  source      TEXT    NOT NULL,
  kind        TEXT,
  station     TEXT,
  served      INTEGER NOT NULL CHECK (served IN (0, 1)),
  reason      TEXT,
  seen_at     INTEGER NOT NULL
) WITHOUT ROWID;

-- 0014 receipt_revocation (issue 23 item 5)
-- Signed POST /v1/receipts/revoke requests already honoured: each (wallet, timestamp) revokes once,
-- so a replayed revocation cannot delete the tokens the wallet received after it. Pruned like
-- receipt_requests once the timestamp is stale. The wallet index serves the revocation's delete.
CREATE TABLE receipt_revocations (
  wallet     TEXT    NOT NULL,
  timestamp  INTEGER NOT NULL,
  used_at    INTEGER NOT NULL,
  PRIMARY KEY (wallet, timestamp)
) WITHOUT ROWID;
CREATE INDEX receipt_revocations_time ON receipt_revocations (timestamp);
CREATE INDEX receipts_wallet ON receipts (wallet);

-- 0015 payment_identifier (issue 28 item 3)
-- payments.payment_identifier: the x402 `payment-identifier` id a v2 payment came with (its
-- idempotency key, src/payments/payment-identifier.ts), one payment per id. payments.result: the
-- answer of the request whose settlement moved the money, written in the apply's transaction and
-- sealed with the server secret (it holds the receipt token). Both are deleted with their row.
CREATE UNIQUE INDEX payments_identifier ON payments (payment_identifier) WHERE payment_identifier IS NOT NULL;

-- 0016 siwx_nonces (issue 28 item 1)
-- Sign-in-with-x nonces already honoured on GET /v1/signals: each (wallet, nonce) signs in once,
-- so a copied SIGN-IN-WITH-X header reads nothing. A row is useless once the sign-in's
-- expirationTime has passed (the header is refused as expired anyway): the retention job deletes
-- rows past expires_at (unix ms).
CREATE TABLE siwx_nonces (
  wallet      TEXT    NOT NULL,
  nonce       TEXT    NOT NULL,
  expires_at  INTEGER NOT NULL,
  used_at     INTEGER NOT NULL,
  PRIMARY KEY (wallet, nonce)
) WITHOUT ROWID;
CREATE INDEX siwx_nonces_expiry ON siwx_nonces (expires_at);

-- 0017 payment_identifier_keyed (issue 35 item 3)
-- payments.payment_identifier holds a keyed hash of the buyer's id (HMAC under the server
-- secret), never the id; payments.result is sealed to the whole signed payment. No DDL change.
-- 0019 signal_provenance (issue 41 item 1)
-- The signals table's provenance columns are in its CREATE TABLE above (channel .. available_at);
-- GET /v1/stats/latency reads the last 7 days of signals by commit time.
CREATE INDEX signals_created_at ON signals (created_at);
-- 0020 read_nodes (issue 40)
-- Read nodes fed by NATS JetStream (src/cluster/, docs/operations.md "Scaling out"). On the
-- primary, the triggers below record the key of every changed row of the replicated tables in
-- replication_outbox, in the transaction that changed it, once `recording` is 1 (set when the
-- primary first starts with NATS_URL, which seeds the outbox with every existing row). The
-- publisher reads each key's row as it is now (or its absence: a delete), publishes it, and
-- deletes the outbox rows JetStream acknowledged. AUTOINCREMENT: an id is never reused, so the
-- stream's duplicate window (msg id = outbox id) never drops a newer change as an old one.
-- On a reader, recording stays 0 and applied_seq is the last stream sequence whose change is
-- in this file, written in the same transaction as the change; stream_created names the stream
-- it counts in (a recreated stream starts over from 1).
CREATE TABLE replication_outbox (
  id   INTEGER PRIMARY KEY AUTOINCREMENT,
  tbl  TEXT    NOT NULL,
  key  TEXT    NOT NULL
);
CREATE TABLE replication_state (
  id             INTEGER PRIMARY KEY CHECK (id = 1),
  recording      INTEGER NOT NULL DEFAULT 0 CHECK (recording IN (0, 1)),
  applied_seq    INTEGER NOT NULL DEFAULT 0,
  stream_created TEXT
);
INSERT INTO replication_state (id) VALUES (1);
CREATE TRIGGER rep_signals_ins AFTER INSERT ON signals WHEN (SELECT recording FROM replication_state) = 1 BEGIN
  INSERT INTO replication_outbox (tbl, key) VALUES ('signals', json_array(NEW.city, NEW.seq));
END;
CREATE TRIGGER rep_signals_upd AFTER UPDATE ON signals WHEN (SELECT recording FROM replication_state) = 1 BEGIN
  INSERT INTO replication_outbox (tbl, key) VALUES ('signals', json_array(NEW.city, NEW.seq));
END;
CREATE TRIGGER rep_signals_del AFTER DELETE ON signals WHEN (SELECT recording FROM replication_state) = 1 BEGIN
  INSERT INTO replication_outbox (tbl, key) VALUES ('signals', json_array(OLD.city, OLD.seq));
END;
CREATE TRIGGER rep_entitlements_ins AFTER INSERT ON entitlements WHEN (SELECT recording FROM replication_state) = 1 BEGIN
  INSERT INTO replication_outbox (tbl, key) VALUES ('entitlements', json_array(NEW.wallet, NEW.city));
END;
CREATE TRIGGER rep_entitlements_upd AFTER UPDATE ON entitlements WHEN (SELECT recording FROM replication_state) = 1 BEGIN
  INSERT INTO replication_outbox (tbl, key) VALUES ('entitlements', json_array(NEW.wallet, NEW.city));
END;
CREATE TRIGGER rep_entitlements_del AFTER DELETE ON entitlements WHEN (SELECT recording FROM replication_state) = 1 BEGIN
  INSERT INTO replication_outbox (tbl, key) VALUES ('entitlements', json_array(OLD.wallet, OLD.city));
END;
CREATE TRIGGER rep_receipts_ins AFTER INSERT ON receipts WHEN (SELECT recording FROM replication_state) = 1 BEGIN
  INSERT INTO replication_outbox (tbl, key) VALUES ('receipts', json_array(NEW.selector));
END;
CREATE TRIGGER rep_receipts_upd AFTER UPDATE ON receipts WHEN (SELECT recording FROM replication_state) = 1 BEGIN
  INSERT INTO replication_outbox (tbl, key) VALUES ('receipts', json_array(NEW.selector));
END;
CREATE TRIGGER rep_receipts_del AFTER DELETE ON receipts WHEN (SELECT recording FROM replication_state) = 1 BEGIN
  INSERT INTO replication_outbox (tbl, key) VALUES ('receipts', json_array(OLD.selector));
END;
CREATE TRIGGER rep_salt_steps_ins AFTER INSERT ON salt_steps WHEN (SELECT recording FROM replication_state) = 1 BEGIN
  INSERT INTO replication_outbox (tbl, key) VALUES ('salt_steps', json_array(NEW.city, NEW.count, NEW.k));
END;
CREATE TRIGGER rep_salt_steps_del AFTER DELETE ON salt_steps WHEN (SELECT recording FROM replication_state) = 1 BEGIN
  INSERT INTO replication_outbox (tbl, key) VALUES ('salt_steps', json_array(OLD.city, OLD.count, OLD.k));
END;
