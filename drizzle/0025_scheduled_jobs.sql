-- The scheduler's once-per-period jobs: each process claims a job's period here before running it, so that a job
-- runs once per period across every process with WORKERS=on (libs/platform/src/scheduler/job-scheduler.ts).
CREATE TABLE "scheduled_jobs" (
	"name" varchar(60) PRIMARY KEY NOT NULL,
	"next_run_at" timestamp (3) with time zone NOT NULL,
	"last_run_at" timestamp (3) with time zone NOT NULL,
	"last_run_by" varchar(200) NOT NULL
);
