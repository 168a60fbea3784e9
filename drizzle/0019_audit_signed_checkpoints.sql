CREATE TABLE "audit_checkpoints" (
	"id" varchar(24) PRIMARY KEY NOT NULL,
	"organization_id" varchar(24) NOT NULL,
	"sequence" bigint NOT NULL,
	"hash" char(64) NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"key_id" varchar(64) NOT NULL,
	"signature" varchar(128) NOT NULL
);
--> statement-breakpoint
CREATE TABLE "audit_signing_keys" (
	"key_id" varchar(64) PRIMARY KEY NOT NULL,
	"public_key_pem" text NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "audit_chain_checkpoints" ADD COLUMN "broken_sequence" bigint;--> statement-breakpoint
ALTER TABLE "audit_chain_checkpoints" ADD COLUMN "broken_reason" varchar(32);--> statement-breakpoint
ALTER TABLE "audit_chain_checkpoints" ADD COLUMN "broken_at" timestamp (3) with time zone;--> statement-breakpoint
CREATE UNIQUE INDEX "audit_checkpoints_org_sequence_key_uq" ON "audit_checkpoints" USING btree ("organization_id","sequence","key_id");--> statement-breakpoint
CREATE INDEX "audit_checkpoints_org_created_idx" ON "audit_checkpoints" USING btree ("organization_id","created_at","id");