CREATE TABLE "scheduled_reports" (
	"id" varchar(24) PRIMARY KEY NOT NULL,
	"organization_id" varchar(24) NOT NULL,
	"workspace_id" varchar(24),
	"name" varchar(120) NOT NULL,
	"frequency" varchar(10) NOT NULL,
	"recipients" jsonb NOT NULL,
	"include_metrics" boolean NOT NULL,
	"include_top_agents" boolean NOT NULL,
	"include_alerts" boolean NOT NULL,
	"include_low_conf" boolean NOT NULL,
	"is_active" boolean NOT NULL,
	"last_sent_at" timestamp (3) with time zone,
	"next_send_at" timestamp (3) with time zone NOT NULL,
	"sent_count" integer DEFAULT 0 NOT NULL,
	"claimed_until" timestamp (3) with time zone,
	"created_by" varchar(24),
	"created_by_email" varchar(320),
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "audit_chain_checkpoints" (
	"organization_id" varchar(24) PRIMARY KEY NOT NULL,
	"sequence" bigint NOT NULL,
	"hash" varchar(64) NOT NULL,
	"fully_verified_at" timestamp (3) with time zone NOT NULL,
	"verified_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "integrations" (
	"id" varchar(24) PRIMARY KEY NOT NULL,
	"organization_id" varchar(24) NOT NULL,
	"type" varchar(10) NOT NULL,
	"name" varchar(120) NOT NULL,
	"recipients" jsonb,
	"url_sealed" text,
	"url_host" varchar(300),
	"secret_sealed" text,
	"created_by" varchar(24),
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "incidents" ADD COLUMN "due_soon_notice_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "incidents" ADD COLUMN "overdue_notice_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "organizations" ADD COLUMN "trace_retention_days" integer;--> statement-breakpoint
CREATE INDEX "scheduled_reports_org_created_idx" ON "scheduled_reports" USING btree ("organization_id","created_at","id");--> statement-breakpoint
CREATE INDEX "scheduled_reports_due_idx" ON "scheduled_reports" USING btree ("next_send_at") WHERE is_active;--> statement-breakpoint
CREATE INDEX "integrations_org_created_idx" ON "integrations" USING btree ("organization_id","created_at","id");--> statement-breakpoint
CREATE INDEX "incidents_open_deadline_idx" ON "incidents" USING btree ("deadline_at") WHERE status = 'open';--> statement-breakpoint
CREATE INDEX "traces_org_matched_idx" ON "traces" USING btree ("organization_id","created_at") WHERE policy_results <> '[]'::jsonb;