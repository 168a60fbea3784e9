CREATE TABLE "domain_events" (
	"id" varchar(24) PRIMARY KEY NOT NULL,
	"organization_id" varchar(24) NOT NULL,
	"type" varchar(60) NOT NULL,
	"agent_id" varchar(24),
	"data" jsonb NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "domain_events_org_created_idx" ON "domain_events" USING btree ("organization_id","created_at","id");--> statement-breakpoint
CREATE INDEX "domain_events_created_idx" ON "domain_events" USING btree ("created_at");