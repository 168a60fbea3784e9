import { Inject, Injectable } from '@nestjs/common';
import { sql } from 'drizzle-orm';
import { DATABASE, type DatabaseHandle } from '../db/database.js';
import { scheduledJobs } from './scheduled-job.schema.js';

/** What the scheduler needs of the periods' store (a fake in unit specs). */
export interface JobPeriods {
  /**
   * Claims the job's current period for `by`: true when the period was over (or the job never ran) and is now
   * this caller's, the next one beginning `periodMs` from now; false when another process claimed it first.
   * A period counts as over up to `earlyMs` before its end.
   */
  claim(name: string, periodMs: number, earlyMs: number, by: string): Promise<boolean>;
}

/** The scheduled_jobs table: the periods of the once-per-period jobs, claimed on the database's clock. */
@Injectable()
export class ScheduledJobsRepository implements JobPeriods {
  // The handle's own connection, never a transaction of the caller's: a claim commits at once, on its own.
  constructor(@Inject(DATABASE) private readonly handle: DatabaseHandle) {}

  async claim(name: string, periodMs: number, earlyMs: number, by: string): Promise<boolean> {
    const ms = (value: number) => sql`(${value}::double precision * interval '1 millisecond')`;
    // One statement: the row is created by the first claim ever, and otherwise moved on only if its period is
    // over; of two processes claiming at once, the second waits for the first's row lock and then finds the
    // period no longer over, so it gets no row back.
    const claimed = await this.handle.db
      .insert(scheduledJobs)
      .values({
        name,
        nextRunAt: sql`now() + ${ms(periodMs)}`,
        lastRunAt: sql`now()`,
        lastRunBy: by,
      })
      .onConflictDoUpdate({
        target: scheduledJobs.name,
        set: {
          nextRunAt: sql`excluded.next_run_at`,
          lastRunAt: sql`excluded.last_run_at`,
          lastRunBy: sql`excluded.last_run_by`,
        },
        setWhere: sql`${scheduledJobs.nextRunAt} <= now() + ${ms(earlyMs)}`,
      })
      .returning({ name: scheduledJobs.name });
    return claimed.length === 1;
  }
}
