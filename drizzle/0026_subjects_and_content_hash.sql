CREATE TABLE "subject_erasures" (
	"id" varchar(24) PRIMARY KEY NOT NULL,
	"organization_id" varchar(24) NOT NULL,
	"subject_hash" varchar(64) NOT NULL,
	"status" varchar(10) NOT NULL,
	"traces_erased" integer DEFAULT 0 NOT NULL,
	"requested_by" varchar(24),
	"started_at" timestamp (3) with time zone NOT NULL,
	"finished_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "subject_holds" (
	"organization_id" varchar(24) NOT NULL,
	"subject_hash" varchar(64) NOT NULL,
	"created_by" varchar(24),
	"created_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "subject_holds_organization_id_subject_hash_pk" PRIMARY KEY("organization_id","subject_hash")
);
--> statement-breakpoint
ALTER TABLE "traces" ALTER COLUMN "input_context" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "traces" ALTER COLUMN "output_decision" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "traces" ALTER COLUMN "metadata" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "traces" ADD COLUMN "content_salt" varchar(32);--> statement-breakpoint
ALTER TABLE "traces" ADD COLUMN "content_entry_id" varchar(24);--> statement-breakpoint
ALTER TABLE "traces" ADD COLUMN "subject_hash" varchar(64);--> statement-breakpoint
ALTER TABLE "traces" ADD COLUMN "erased_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "organizations" ADD COLUMN "contest_contact" varchar(500);--> statement-breakpoint
CREATE INDEX "subject_erasures_org_subject_idx" ON "subject_erasures" USING btree ("organization_id","subject_hash","started_at");--> statement-breakpoint
CREATE INDEX "subject_erasures_running_idx" ON "subject_erasures" USING btree ("status","started_at");--> statement-breakpoint
CREATE INDEX "traces_org_subject_idx" ON "traces" USING btree ("organization_id","subject_hash","created_at","id") WHERE subject_hash is not null;