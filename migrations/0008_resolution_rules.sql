-- 0008 resolution_rules
-- The resolution rule each city-day's market event states, parsed from its text (source, station,
-- unit, precision, fallback), and whether the service signals that day or pauses it. The rule seen
-- first is kept: a rule or observation feed that changes during the day pauses the day, so one
-- day's signals never mix sources. Times in epoch ms.
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
  PRIMARY KEY (city, target_date)
) WITHOUT ROWID;
CREATE INDEX resolution_rules_paused ON resolution_rules (target_date) WHERE status = 'paused';
