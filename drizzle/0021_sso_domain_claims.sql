CREATE TABLE "sso_domain_claims" (
	"organization_id" varchar(24) NOT NULL,
	"domain" varchar(253) NOT NULL,
	"challenge" varchar(64) NOT NULL,
	"status" varchar(10) NOT NULL,
	"verified_at" timestamp (3) with time zone,
	"last_checked_at" timestamp (3) with time zone,
	"missing_since" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "sso_domain_claims_organization_id_domain_pk" PRIMARY KEY("organization_id","domain")
);
--> statement-breakpoint
CREATE INDEX "sso_domain_claims_domain_idx" ON "sso_domain_claims" USING btree ("domain");--> statement-breakpoint
CREATE INDEX "sso_domain_claims_recheck_idx" ON "sso_domain_claims" USING btree ("last_checked_at") WHERE status <> 'pending';--> statement-breakpoint
-- Domains listed before proofs existed were first come, first served: each becomes a pending claim of the
-- organization that listed it, and routes nothing until its TXT record is published and verified.
INSERT INTO "sso_domain_claims" ("organization_id", "domain", "challenge", "status", "created_at", "updated_at")
SELECT "organization_id", "domain", replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'pending',
       "created_at", now()
FROM "sso_domains";--> statement-breakpoint
DELETE FROM "sso_domains";
