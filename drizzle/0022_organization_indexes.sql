-- migrate: outside-transaction
-- Organization erasure and export read these tables by organization. Built concurrently, so that sign-ins,
-- tokens and outbox writes go on during the build: the migrator runs each statement on its own, outside a
-- transaction, and records the migration once all have succeeded (a rerun skips what exists, and rebuilds an
-- index an interrupted build left invalid).
CREATE INDEX CONCURRENTLY IF NOT EXISTS "login_events_org_idx" ON "login_events" USING btree ("organization_id","id") WHERE organization_id is not null;--> statement-breakpoint
CREATE INDEX CONCURRENTLY IF NOT EXISTS "sessions_org_idx" ON "sessions" USING btree ("organization_id","id");--> statement-breakpoint
CREATE INDEX CONCURRENTLY IF NOT EXISTS "one_time_tokens_org_idx" ON "one_time_tokens" USING btree ("organization_id","id") WHERE organization_id is not null;--> statement-breakpoint
CREATE INDEX CONCURRENTLY IF NOT EXISTS "outbox_messages_org_idx" ON "outbox_messages" USING btree ("organization_id","id") WHERE organization_id is not null;
