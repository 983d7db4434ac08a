-- 0019 signal_provenance (issue 41 item 1)
-- Where each signal's reading came from and when each party had it: the channel (metar-api, wu,
-- hko, sim), the raw report (the METAR text), the value used with its unit and precision (0.1 for
-- tenths, 1 for whole degrees), and the source's own receipt time (aviationweather.gov
-- receiptTime), ISO 8601 like observed_at. storedAt is created_at, which already holds the commit.
ALTER TABLE signals ADD COLUMN channel TEXT;
ALTER TABLE signals ADD COLUMN raw_report TEXT;
ALTER TABLE signals ADD COLUMN reported_value REAL;
ALTER TABLE signals ADD COLUMN reported_unit TEXT;
ALTER TABLE signals ADD COLUMN reported_precision REAL;
ALTER TABLE signals ADD COLUMN available_at TEXT;
-- GET /v1/stats/latency reads the last 7 days of signals by commit time.
CREATE INDEX signals_created_at ON signals (created_at);
-- Payloads are served byte for byte, so the fields are written into the old ones once, here, and
-- never patched on a read. What an old row knows exactly is filled in: the channel its source
-- implies and storedAt from created_at; what it never recorded is null.
UPDATE signals SET channel = CASE json_extract(payload, '$.source')
    WHEN 'metar' THEN 'metar-api' WHEN 'wu' THEN 'wu' WHEN 'hko' THEN 'hko' WHEN 'sim' THEN 'sim' END;
UPDATE signals SET payload = json_set(payload,
    '$.channel', channel,
    '$.rawReport', json('null'),
    '$.reportedValue', json('null'),
    '$.reportedUnit', json('null'),
    '$.reportedPrecision', json('null'),
    '$.availableAt', json('null'),
    '$.storedAt', strftime('%Y-%m-%dT%H:%M:%S', created_at / 1000, 'unixepoch') || '.' || printf('%03d', created_at % 1000) || 'Z')
  WHERE json_type(payload, '$.storedAt') IS NULL;
