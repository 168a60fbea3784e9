import { pgTable, timestamp, varchar } from 'drizzle-orm/pg-core';

/**
 * The periods of the scheduler's once-per-period jobs, shared by every process: before a run, a process claims the
 * job's period here (one conditional upsert, on the database's clock), and only the process whose claim succeeds
 * runs it. One row per job that has run at least once; `next_run_at` is when its next period begins.
 */
export const scheduledJobs = pgTable('scheduled_jobs', {
  /** The job's name, as registered (`trace-retention`, `alerts`, …). */
  name: varchar('name', { length: 60 }).primaryKey(),
  /** When the job's current period ends: a claim before then is refused. */
  nextRunAt: timestamp('next_run_at', { withTimezone: true, precision: 3 }).notNull(),
  /** When the last period was claimed (the run started), by the database's clock. */
  lastRunAt: timestamp('last_run_at', { withTimezone: true, precision: 3 }).notNull(),
  /** Which process claimed it: `host:pid:instance`. */
  lastRunBy: varchar('last_run_by', { length: 200 }).notNull(),
});

export type ScheduledJobRow = typeof scheduledJobs.$inferSelect;
