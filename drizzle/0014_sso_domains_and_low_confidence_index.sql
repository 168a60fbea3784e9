CREATE TABLE "sso_domains" (
	"domain" varchar(253) PRIMARY KEY NOT NULL,
	"organization_id" varchar(24) NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "sso_domains_org_idx" ON "sso_domains" USING btree ("organization_id");--> statement-breakpoint
CREATE INDEX "traces_org_low_confidence_idx" ON "traces" USING btree ("organization_id","created_at") WHERE confidence < 0.5;