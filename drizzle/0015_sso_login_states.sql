CREATE TABLE "sso_login_states" (
	"id" varchar(64) PRIMARY KEY NOT NULL,
	"organization_id" varchar(24) NOT NULL,
	"provider" varchar(8) NOT NULL,
	"nonce" varchar(64) NOT NULL,
	"code_verifier_sealed" text NOT NULL,
	"browser_hash" varchar(64) NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "sso_login_states_expires_idx" ON "sso_login_states" USING btree ("expires_at");