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
  PRIMARY KEY (city, seq),
  UNIQUE (city, target_date, new_bucket)
) WITHOUT ROWID;
