-- migrate: outside-transaction
-- The CPI reads count the open day's verdicts live, from the items decided since the day began, and find an
-- organization's first verdict day. Built concurrently, so that ingestion (which writes review items) and review
-- decisions go on during the build: the migrator runs the statement on its own, outside a transaction, and
-- records the migration once it has succeeded (a rerun skips an index that exists, and rebuilds one an
-- interrupted build left invalid).
CREATE INDEX CONCURRENTLY IF NOT EXISTS "review_items_org_decided_idx" ON "review_items" USING btree ("organization_id","decided_at") WHERE status in ('approved', 'rejected');
