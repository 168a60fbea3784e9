CREATE TABLE "agents" (
	"id" varchar(24) PRIMARY KEY NOT NULL,
	"organization_id" varchar(24) NOT NULL,
	"name" varchar(200) NOT NULL,
	"description" varchar(2000),
	"created_by" varchar(24),
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "policies" (
	"id" varchar(24) PRIMARY KEY NOT NULL,
	"organization_id" varchar(24) NOT NULL,
	"name" varchar(200) NOT NULL,
	"description" varchar(2000),
	"outcome" varchar(10) NOT NULL,
	"conditions" jsonb NOT NULL,
	"match" varchar(3) DEFAULT 'all' NOT NULL,
	"agent_ids" text[] DEFAULT '{}'::text[] NOT NULL,
	"priority" integer DEFAULT 100 NOT NULL,
	"is_active" boolean DEFAULT true NOT NULL,
	"template_id" varchar(64),
	"created_by" varchar(24),
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "review_items" (
	"id" varchar(24) PRIMARY KEY NOT NULL,
	"organization_id" varchar(24) NOT NULL,
	"trace_id" varchar(24) NOT NULL,
	"agent_id" varchar(24) NOT NULL,
	"status" varchar(10) NOT NULL,
	"matched_policies" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"assigned_to" varchar(24),
	"decision" varchar(10),
	"notes" text,
	"decided_by" varchar(24),
	"decided_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "trace_idempotency_keys" (
	"organization_id" varchar(24) NOT NULL,
	"key" varchar(255) NOT NULL,
	"trace_id" varchar(24) NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "trace_idempotency_keys_organization_id_key_pk" PRIMARY KEY("organization_id","key")
);
--> statement-breakpoint
CREATE TABLE "traces" (
	"id" varchar(24) PRIMARY KEY NOT NULL,
	"organization_id" varchar(24) NOT NULL,
	"agent_id" varchar(24) NOT NULL,
	"status" varchar(10) NOT NULL,
	"confidence" double precision NOT NULL,
	"input_context" jsonb NOT NULL,
	"output_decision" jsonb NOT NULL,
	"metadata" jsonb NOT NULL,
	"rationale" text,
	"schema_version" varchar(10) NOT NULL,
	"human_override" boolean DEFAULT false NOT NULL,
	"policy_results" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"review_item_id" varchar(24),
	"search_text" text NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "agents_org_created_idx" ON "agents" USING btree ("organization_id","created_at");--> statement-breakpoint
CREATE INDEX "policies_org_active_idx" ON "policies" USING btree ("organization_id","is_active");--> statement-breakpoint
CREATE UNIQUE INDEX "review_items_trace_uq" ON "review_items" USING btree ("trace_id");--> statement-breakpoint
CREATE INDEX "review_items_org_status_created_idx" ON "review_items" USING btree ("organization_id","status","created_at");--> statement-breakpoint
CREATE INDEX "trace_idempotency_created_idx" ON "trace_idempotency_keys" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "traces_org_created_idx" ON "traces" USING btree ("organization_id","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "traces_org_agent_created_idx" ON "traces" USING btree ("organization_id","agent_id","created_at" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "traces_org_status_created_idx" ON "traces" USING btree ("organization_id","status","created_at" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "traces_search_trgm_idx" ON "traces" USING gin ("search_text" gin_trgm_ops);