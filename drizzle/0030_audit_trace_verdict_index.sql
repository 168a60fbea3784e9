-- migrate: outside-transaction
-- GET /traces/:id/verify finds the trace's latest CPI verdict entry, which records the hash of the content the verdict
-- left. Built concurrently, so that the audit log takes writes during the build (see 0028 for how the migrator runs
-- such a migration).
CREATE INDEX CONCURRENTLY IF NOT EXISTS "audit_entries_org_trace_verdict_idx" ON "audit_entries" USING btree ("organization_id","target_id","sequence") WHERE target_type = 'trace' and event_type in ('cpi.approved', 'cpi.corrected');
