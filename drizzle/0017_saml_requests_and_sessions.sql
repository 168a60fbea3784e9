CREATE TABLE "saml_assertions" (
	"organization_id" varchar(24) NOT NULL,
	"assertion_id" varchar(256) NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "saml_assertions_organization_id_assertion_id_pk" PRIMARY KEY("organization_id","assertion_id")
);
--> statement-breakpoint
CREATE TABLE "saml_requests" (
	"id" varchar(128) PRIMARY KEY NOT NULL,
	"organization_id" varchar(24) NOT NULL,
	"kind" varchar(8) NOT NULL,
	"browser_hash" varchar(64),
	"expires_at" timestamp (3) with time zone NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "saml_name_id" varchar(512);--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "saml_name_id_format" varchar(256);--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "saml_session_index" varchar(256);--> statement-breakpoint
CREATE INDEX "saml_assertions_expires_idx" ON "saml_assertions" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "saml_requests_org_idx" ON "saml_requests" USING btree ("organization_id");--> statement-breakpoint
CREATE INDEX "saml_requests_expires_idx" ON "saml_requests" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "sessions_saml_name_id_idx" ON "sessions" USING btree ("saml_name_id") WHERE "sessions"."saml_name_id" is not null;