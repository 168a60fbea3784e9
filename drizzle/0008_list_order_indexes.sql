DROP INDEX "fria_org_updated_idx";--> statement-breakpoint
DROP INDEX "fria_org_status_updated_idx";--> statement-breakpoint
DROP INDEX "traces_org_created_idx";--> statement-breakpoint
DROP INDEX "traces_org_agent_created_idx";--> statement-breakpoint
DROP INDEX "traces_org_status_created_idx";--> statement-breakpoint
CREATE INDEX "fria_org_updated_idx" ON "fria_assessments" USING btree ("organization_id","updated_at","id");--> statement-breakpoint
CREATE INDEX "fria_org_status_updated_idx" ON "fria_assessments" USING btree ("organization_id","status","updated_at","id");--> statement-breakpoint
CREATE INDEX "traces_org_created_idx" ON "traces" USING btree ("organization_id","created_at","id");--> statement-breakpoint
CREATE INDEX "traces_org_agent_created_idx" ON "traces" USING btree ("organization_id","agent_id","created_at","id");--> statement-breakpoint
CREATE INDEX "traces_org_status_created_idx" ON "traces" USING btree ("organization_id","status","created_at","id");