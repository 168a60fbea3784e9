CREATE TABLE "scim_identities" (
	"organization_id" varchar(24) NOT NULL,
	"user_id" varchar(24) NOT NULL,
	"external_id" varchar(255),
	"given_name" varchar(200),
	"family_name" varchar(200),
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "scim_identities_organization_id_user_id_pk" PRIMARY KEY("organization_id","user_id")
);
--> statement-breakpoint
CREATE TABLE "scim_tokens" (
	"organization_id" varchar(24) PRIMARY KEY NOT NULL,
	"id" varchar(24) NOT NULL,
	"token_hash" varchar(64) NOT NULL,
	"created_by" varchar(24),
	"created_at" timestamp (3) with time zone NOT NULL,
	"last_used_at" timestamp (3) with time zone
);
--> statement-breakpoint
ALTER TABLE "memberships" ADD COLUMN "deactivated_by" varchar(8);--> statement-breakpoint
CREATE INDEX "scim_identities_external_idx" ON "scim_identities" USING btree ("organization_id","external_id");--> statement-breakpoint
CREATE UNIQUE INDEX "scim_tokens_hash_uq" ON "scim_tokens" USING btree ("token_hash");