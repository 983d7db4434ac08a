-- 0010 rule_kind
-- Which reports enter a city-day's maximum and how it is rounded is part of the parsed rule
-- (src/buckets/rule-kinds.ts): noaa-hourly, noaa-all, wu-table, hko, cwa. NULL for days recorded
-- before this version (and for unknown rules); such a day is not paused by the first read that states a kind.
ALTER TABLE resolution_rules ADD COLUMN kind TEXT
  CHECK (kind IN ('noaa-hourly', 'noaa-all', 'wu-table', 'hko', 'cwa'));
