CREATE EXTENSION IF NOT EXISTS pg_trgm;--> statement-breakpoint
CREATE TABLE "audit_entries" (
	"id" varchar(24) PRIMARY KEY NOT NULL,
	"organization_id" varchar(24) NOT NULL,
	"sequence" bigint NOT NULL,
	"event_type" varchar(100) NOT NULL,
	"user_id" varchar(24),
	"actor" jsonb NOT NULL,
	"target_type" varchar(64),
	"target_id" varchar(128),
	"metadata" jsonb NOT NULL,
	"ip" varchar(64),
	"user_agent" varchar(512),
	"created_at" timestamp (3) with time zone NOT NULL,
	"prev_hash" char(64) NOT NULL,
	"hash" char(64) NOT NULL
);
--> statement-breakpoint
CREATE TABLE "memberships" (
	"id" varchar(24) PRIMARY KEY NOT NULL,
	"organization_id" varchar(24) NOT NULL,
	"user_id" varchar(24) NOT NULL,
	"role" varchar(10) NOT NULL,
	"is_active" boolean DEFAULT true NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "organizations" (
	"id" varchar(24) PRIMARY KEY NOT NULL,
	"name" varchar(200) NOT NULL,
	"plan" varchar(20) NOT NULL,
	"email_domains" text[] DEFAULT '{}'::text[] NOT NULL,
	"sso_config" jsonb,
	"role_mapping_rules" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"compliance_notes" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "revoked_tokens" (
	"jti" varchar(64) PRIMARY KEY NOT NULL,
	"user_id" varchar(24) NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"revoked_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sessions" (
	"id" varchar(24) PRIMARY KEY NOT NULL,
	"jti" varchar(64) NOT NULL,
	"user_id" varchar(24) NOT NULL,
	"organization_id" varchar(24) NOT NULL,
	"ip" varchar(64),
	"user_agent" varchar(512),
	"created_at" timestamp (3) with time zone NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"revoked_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "users" (
	"id" varchar(24) PRIMARY KEY NOT NULL,
	"email" varchar(254) NOT NULL,
	"name" varchar(200) NOT NULL,
	"password_hash" varchar(255),
	"locale" varchar(35) DEFAULT 'en' NOT NULL,
	"timezone" varchar(64) DEFAULT 'UTC' NOT NULL,
	"is_active" boolean DEFAULT true NOT NULL,
	"mfa_enabled" boolean DEFAULT false NOT NULL,
	"sso_id" varchar(255),
	"last_login_ip" varchar(64),
	"last_login_at" timestamp (3) with time zone,
	"session_timeout" varchar(4) DEFAULT '7d' NOT NULL,
	"password_changed_at" timestamp (3) with time zone,
	"preferences" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "memberships" ADD CONSTRAINT "memberships_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "audit_entries_org_sequence_uq" ON "audit_entries" USING btree ("organization_id","sequence");--> statement-breakpoint
CREATE INDEX "audit_entries_org_created_idx" ON "audit_entries" USING btree ("organization_id","created_at");--> statement-breakpoint
CREATE INDEX "audit_entries_org_event_idx" ON "audit_entries" USING btree ("organization_id","event_type");--> statement-breakpoint
CREATE INDEX "audit_entries_org_user_idx" ON "audit_entries" USING btree ("organization_id","user_id");--> statement-breakpoint
CREATE UNIQUE INDEX "memberships_org_user_uq" ON "memberships" USING btree ("organization_id","user_id");--> statement-breakpoint
CREATE INDEX "memberships_user_idx" ON "memberships" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "revoked_tokens_expires_idx" ON "revoked_tokens" USING btree ("expires_at");--> statement-breakpoint
CREATE UNIQUE INDEX "sessions_jti_uq" ON "sessions" USING btree ("jti");--> statement-breakpoint
CREATE INDEX "sessions_user_idx" ON "sessions" USING btree ("user_id","expires_at");--> statement-breakpoint
CREATE UNIQUE INDEX "users_email_uq" ON "users" USING btree ("email");