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
CREATE TABLE "webhook_deliveries" (
	"id" varchar(24) PRIMARY KEY NOT NULL,
	"organization_id" varchar(24) NOT NULL,
	"webhook_id" varchar(24) NOT NULL,
	"event_id" varchar(24) NOT NULL,
	"event_type" varchar(60) NOT NULL,
	"status" varchar(10) NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"response_status" integer,
	"response_body" varchar(1024),
	"error" varchar(500),
	"next_attempt_at" timestamp (3) with time zone,
	"redelivery_of" varchar(24),
	"created_at" timestamp (3) with time zone NOT NULL,
	"completed_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "webhooks" (
	"id" varchar(24) PRIMARY KEY NOT NULL,
	"organization_id" varchar(24) NOT NULL,
	"url" varchar(2048) NOT NULL,
	"events" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"filter_agent_id" varchar(24),
	"description" varchar(500),
	"is_active" boolean DEFAULT true NOT NULL,
	"disabled_reason" varchar(200),
	"secret_sealed" text NOT NULL,
	"previous_secret_sealed" text,
	"previous_secret_expires_at" timestamp (3) with time zone,
	"created_by" varchar(24),
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
CREATE UNIQUE INDEX "webhook_deliveries_webhook_event_uq" ON "webhook_deliveries" USING btree ("webhook_id","event_id") WHERE "webhook_deliveries"."redelivery_of" is null;--> statement-breakpoint
CREATE INDEX "webhook_deliveries_webhook_created_idx" ON "webhook_deliveries" USING btree ("organization_id","webhook_id","created_at");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_created_idx" ON "webhook_deliveries" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "webhooks_org_created_idx" ON "webhooks" USING btree ("organization_id","created_at");--> statement-breakpoint
CREATE INDEX "domain_events_org_created_idx" ON "domain_events" USING btree ("organization_id","created_at","id");