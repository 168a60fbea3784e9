CREATE TABLE "outbox_messages" (
	"id" varchar(24) PRIMARY KEY NOT NULL,
	"topic" varchar(60) NOT NULL,
	"organization_id" varchar(24),
	"payload" jsonb NOT NULL,
	"sealed" text,
	"status" varchar(10) NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"last_error" varchar(500),
	"next_attempt_at" timestamp (3) with time zone NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"sent_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE INDEX "outbox_messages_due_idx" ON "outbox_messages" USING btree ("status","next_attempt_at");--> statement-breakpoint
CREATE INDEX "outbox_messages_topic_created_idx" ON "outbox_messages" USING btree ("topic","created_at");--> statement-breakpoint
-- Mail was the first outbox: its messages move to the general one (topic mail.send), with their sealed bodies,
-- statuses, attempts and schedule, so that nothing pending is lost across the upgrade.
INSERT INTO "outbox_messages" ("id", "topic", "organization_id", "payload", "sealed", "status", "attempts", "last_error", "next_attempt_at", "created_at", "sent_at")
SELECT "id", 'mail.send', NULL, jsonb_build_object('to', "to", 'subject', "subject", 'template', "template"), "body_encrypted", "status", "attempts", "last_error", "next_attempt_at", "created_at", "sent_at"
FROM "mail_outbox";
