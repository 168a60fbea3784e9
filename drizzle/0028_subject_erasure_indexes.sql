-- migrate: outside-transaction
-- A subject's erasure finds the stored events about its traces and the deliveries of those events. Built
-- concurrently, so that review decisions, events and webhook deliveries go on during the build: the migrator runs
-- each statement on its own, outside a transaction, and records the migration once all have succeeded (a rerun
-- skips what exists, and rebuilds an index an interrupted build left invalid).
CREATE INDEX CONCURRENTLY IF NOT EXISTS "webhook_deliveries_org_event_idx" ON "webhook_deliveries" USING btree ("organization_id","event_id");--> statement-breakpoint
CREATE INDEX CONCURRENTLY IF NOT EXISTS "domain_events_org_trace_idx" ON "domain_events" USING btree ("organization_id",("data"->>'traceId'));
