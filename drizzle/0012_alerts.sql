CREATE TABLE "alert_rules" (
	"id" varchar(24) PRIMARY KEY NOT NULL,
	"organization_id" varchar(24) NOT NULL,
	"name" varchar(120) NOT NULL,
	"metric" varchar(24) NOT NULL,
	"agent_id" varchar(24),
	"comparison" varchar(2) NOT NULL,
	"threshold" double precision NOT NULL,
	"window_minutes" integer NOT NULL,
	"integration_ids" jsonb NOT NULL,
	"is_active" boolean NOT NULL,
	"state" varchar(8) NOT NULL,
	"last_triggered_at" timestamp (3) with time zone,
	"last_evaluated_at" timestamp (3) with time zone,
	"last_value" double precision,
	"next_evaluation_at" timestamp (3) with time zone NOT NULL,
	"created_by" varchar(24),
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "alert_transitions" (
	"id" varchar(24) PRIMARY KEY NOT NULL,
	"organization_id" varchar(24) NOT NULL,
	"alert_id" varchar(24) NOT NULL,
	"alert_name" varchar(120) NOT NULL,
	"from_state" varchar(8) NOT NULL,
	"to_state" varchar(8) NOT NULL,
	"metric" varchar(24) NOT NULL,
	"agent_id" varchar(24),
	"comparison" varchar(2) NOT NULL,
	"threshold" double precision NOT NULL,
	"window_minutes" integer NOT NULL,
	"value" double precision NOT NULL,
	"notified" integer NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "alert_rules_org_created_idx" ON "alert_rules" USING btree ("organization_id","created_at","id");--> statement-breakpoint
CREATE INDEX "alert_rules_due_idx" ON "alert_rules" USING btree ("next_evaluation_at") WHERE is_active;--> statement-breakpoint
CREATE INDEX "alert_transitions_alert_idx" ON "alert_transitions" USING btree ("organization_id","alert_id","created_at","id");--> statement-breakpoint
CREATE INDEX "alert_transitions_org_created_idx" ON "alert_transitions" USING btree ("organization_id","created_at");