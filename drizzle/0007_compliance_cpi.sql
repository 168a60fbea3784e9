CREATE TABLE "fria_assessments" (
	"id" varchar(24) PRIMARY KEY NOT NULL,
	"organization_id" varchar(24) NOT NULL,
	"system_name" varchar(200) NOT NULL,
	"deployer_profile_id" varchar(64),
	"purpose" text,
	"affected_persons" text,
	"usage_context" text,
	"duration_of_use" text,
	"identified_risks" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"human_oversight_summary" text,
	"complaints_mechanism" text,
	"status" varchar(10) NOT NULL,
	"chain_hash" varchar(64),
	"approved_by" varchar(24),
	"approved_at" timestamp (3) with time zone,
	"first_submitted_at" timestamp (3) with time zone,
	"created_by" varchar(24),
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "compliance_mapping_notes" (
	"id" varchar(24) PRIMARY KEY NOT NULL,
	"organization_id" varchar(24) NOT NULL,
	"framework" varchar(16) NOT NULL,
	"clause_id" varchar(32) NOT NULL,
	"status" varchar(16) NOT NULL,
	"evidence" text,
	"evidence_refs" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"reviewed_at" timestamp (3) with time zone,
	"reviewed_by" varchar(24),
	"reviewed_by_email" varchar(320),
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "trace_feedback" (
	"organization_id" varchar(24) NOT NULL,
	"trace_id" varchar(24) NOT NULL,
	"agent_id" varchar(24) NOT NULL,
	"action" varchar(10) NOT NULL,
	"status_before" varchar(10) NOT NULL,
	"original_decision" jsonb,
	"corrected_decision" jsonb,
	"original_confidence" double precision NOT NULL,
	"corrected_confidence" double precision,
	"notes" text,
	"user_email" varchar(320),
	"trace_created_at" timestamp (3) with time zone NOT NULL,
	"first_at" timestamp (3) with time zone NOT NULL,
	"last_at" timestamp (3) with time zone NOT NULL,
	"submissions" integer DEFAULT 1 NOT NULL,
	CONSTRAINT "trace_feedback_organization_id_trace_id_pk" PRIMARY KEY("organization_id","trace_id")
);
--> statement-breakpoint
CREATE TABLE "trace_daily_rollups" (
	"organization_id" varchar(24) NOT NULL,
	"day" date NOT NULL,
	"agent_id" varchar(24) NOT NULL,
	"status" varchar(10) NOT NULL,
	"human_override" boolean NOT NULL,
	"traces" integer NOT NULL,
	"confidence_sum" double precision NOT NULL,
	CONSTRAINT "trace_daily_rollups_organization_id_day_agent_id_status_human_override_pk" PRIMARY KEY("organization_id","day","agent_id","status","human_override")
);
--> statement-breakpoint
CREATE TABLE "trace_rollup_days" (
	"organization_id" varchar(24) NOT NULL,
	"day" date NOT NULL,
	"computed_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "trace_rollup_days_organization_id_day_pk" PRIMARY KEY("organization_id","day")
);
--> statement-breakpoint
CREATE INDEX "fria_org_updated_idx" ON "fria_assessments" USING btree ("organization_id","updated_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "fria_org_status_updated_idx" ON "fria_assessments" USING btree ("organization_id","status","updated_at" DESC NULLS LAST);--> statement-breakpoint
CREATE UNIQUE INDEX "compliance_notes_org_framework_clause_uq" ON "compliance_mapping_notes" USING btree ("organization_id","framework","clause_id");--> statement-breakpoint
CREATE INDEX "trace_feedback_org_last_idx" ON "trace_feedback" USING btree ("organization_id","last_at");--> statement-breakpoint
CREATE INDEX "trace_feedback_org_agent_idx" ON "trace_feedback" USING btree ("organization_id","agent_id");