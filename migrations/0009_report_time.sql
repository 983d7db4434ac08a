-- 0009 report_time
-- The station's own time of the report that first showed a signal's new reading (METAR obsTime,
-- weather.com valid_time_gmt), ISO 8601 like observed_at, so buyers see the whole lag. NULL for
-- signals stored before this version; their public payload gains `"reportedAt": null`, so every
-- stored signal has the field the schema documents.
ALTER TABLE signals ADD COLUMN reported_at TEXT;
UPDATE signals SET payload = json_set(payload, '$.reportedAt', json('null'))
  WHERE json_type(payload, '$.reportedAt') IS NULL;
