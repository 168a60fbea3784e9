ALTER TABLE "organizations" ADD COLUMN "deleted_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "organizations" ADD COLUMN "erase_after" timestamp (3) with time zone;--> statement-breakpoint
CREATE INDEX "organizations_erase_after_idx" ON "organizations" USING btree ("erase_after") WHERE erase_after is not null;