CREATE TABLE "approval_patterns" (
	"id" varchar(24) PRIMARY KEY NOT NULL,
	"organization_id" varchar(24) NOT NULL,
	"signature" varchar(64) NOT NULL,
	"agent_id" varchar(24) NOT NULL,
	"action" varchar(512),
	"policy_ids" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"status" varchar(16) NOT NULL,
	"observations" integer DEFAULT 0 NOT NULL,
	"approvals" integer DEFAULT 0 NOT NULL,
	"signed_off_by" varchar(24),
	"signed_off_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "domain_events" (
	"id" varchar(24) PRIMARY KEY NOT NULL,
	"organization_id" varchar(24) NOT NULL,
	"type" varchar(60) NOT NULL,
	"agent_id" varchar(24),
	"data" jsonb NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX "approval_patterns_org_signature_uq" ON "approval_patterns" USING btree ("organization_id","signature");--> statement-breakpoint
CREATE INDEX "approval_patterns_org_status_idx" ON "approval_patterns" USING btree ("organization_id","status","updated_at");--> statement-breakpoint
CREATE INDEX "domain_events_org_created_idx" ON "domain_events" USING btree ("organization_id","created_at","id");--> statement-breakpoint
CREATE INDEX "domain_events_created_idx" ON "domain_events" USING btree ("created_at");