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
