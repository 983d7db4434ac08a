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
