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
