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
