ALTER TABLE "traces" ADD COLUMN "pii_masked" jsonb;--> statement-breakpoint
ALTER TABLE "organizations" ADD COLUMN "pii_masking" jsonb;