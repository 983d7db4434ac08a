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
