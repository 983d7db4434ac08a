-- 0007 retention: indexes that keep the hot queries and the daily prune indexed at any size, and
-- row counters kept by triggers so the operator page and /metrics never count a growing table.

-- Enqueueing a signal finds the wallets still paid past its seq in that city from this index,
-- instead of reading every entitlement.
CREATE INDEX entitlements_city_paid ON entitlements (city, paid_through_seq);

-- Outbox counts now come from row_counts; the prune finds finished rows by age.
DROP INDEX delivery_outbox_status;
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
