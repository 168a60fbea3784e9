CREATE TABLE "incidents" (
	"id" varchar(24) PRIMARY KEY NOT NULL,
	"organization_id" varchar(24) NOT NULL,
	"title" varchar(200) NOT NULL,
	"description" text,
	"category" varchar(32) NOT NULL,
	"agent_id" varchar(24),
	"trace_id" varchar(24),
	"aware_at" timestamp (3) with time zone NOT NULL,
	"deadline_at" timestamp (3) with time zone NOT NULL,
	"status" varchar(10) NOT NULL,
	"reported_at" timestamp (3) with time zone,
	"closed_at" timestamp (3) with time zone,
	"created_by" varchar(24),
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "incidents_org_created_idx" ON "incidents" USING btree ("organization_id","created_at","id");--> statement-breakpoint
CREATE INDEX "incidents_org_status_deadline_idx" ON "incidents" USING btree ("organization_id","status","deadline_at");