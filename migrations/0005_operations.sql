-- 0005 operations
-- Indexes for the operator page and the scrape-time gauges, so both stay cheap as the tables grow:
-- revenue by day and the all-time total read only applied payments, from the index alone; the
-- outbox is counted by status from its index; entitlements are listed newest first.
CREATE INDEX payments_applied ON payments (created_at, city, amount_micro) WHERE status = 'applied';
CREATE INDEX delivery_outbox_status ON delivery_outbox (status);
CREATE INDEX entitlements_updated ON entitlements (updated_at);
