CREATE TABLE "cpi_verdict_rollup_days" (
	"organization_id" varchar(24) NOT NULL,
	"day" date NOT NULL,
	"computed_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "cpi_verdict_rollup_days_organization_id_day_pk" PRIMARY KEY("organization_id","day")
);
--> statement-breakpoint
CREATE TABLE "cpi_verdict_rollups" (
	"organization_id" varchar(24) NOT NULL,
	"day" date NOT NULL,
	"agent_id" varchar(24) NOT NULL,
	"flagged" boolean NOT NULL,
	"flag_was_right" boolean NOT NULL,
	"overridden" boolean NOT NULL,
	"verdicts" integer NOT NULL,
	CONSTRAINT "cpi_verdict_rollups_pk" PRIMARY KEY("organization_id","day","agent_id","flagged","flag_was_right","overridden")
);
