import { sql } from 'drizzle-orm';
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core';
import type { Clock, Db, TransactionHost } from '#platform';

/**
 * What the daily rollups share (the traces' in TraceRollups, the verdicts' in VerdictRollups): the UTC days they count
 * by, when a day is closed, the statements on the table of each that records which days are rolled up, and how a
 * missing day is rolled up once. Written once, so that a day closes at the same moment for both and a fix to the
 * locking reaches both.
 */

/** One UTC day: the rollups count by UTC day, whatever the organization's time zone, so every day is this long. */
export const DAY_MS = 86_400_000;

/**
 * A day is closed (rolled up) once it ended this long ago: a trace and a verdict are stamped with the time they were
 * received and commit within their request, so nothing of a closed day can still be on its way.
 */
export const ROLLUP_GRACE_MS = 10 * 60_000;

/** The UTC day (YYYY-MM-DD) of a time in milliseconds, as the rollup tables' `day` column holds it. */
export const dayOf = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/** The start (UTC midnight, in milliseconds) of the day of a time in milliseconds. */
export const startOfDay = (ms: number): number => Math.floor(ms / DAY_MS) * DAY_MS;

/**
 * A table of rolled-up days: one marker per organization and day whose rollup rows exist (a day with nothing to count
 * has a marker and no rows), so that a day is rolled up once. trace_rollup_days and cpi_verdict_rollup_days are two.
 */
export type RollupDaysTable = PgTable & { organizationId: PgColumn; day: PgColumn; computedAt: PgColumn };

/**
 * The days in [first, last] (YYYY-MM-DD) that have no marker in `table` yet, in order. Run by the repository that
 * owns the table, in its caller's transaction when `db` is its.
 */
export async function missingRollupDays(
  db: Db,
  table: RollupDaysTable,
  organizationId: string,
  first: string,
  last: string,
): Promise<string[]> {
  const result = await db.execute(sql`select to_char(d, 'YYYY-MM-DD') as day
      from generate_series(${first}::date, ${last}::date, interval '1 day') as d
      where not exists (select 1 from ${table} r where r.organization_id = ${organizationId} and r.day = d::date)
      order by d`);
  return (result as unknown as { rows: { day: string }[] }).rows.map((r) => r.day);
}

/** Records these days (YYYY-MM-DD) as rolled up in `table`, in the transaction that wrote their rollup rows. */
export async function markDaysRolledUp(
  db: Db,
  table: RollupDaysTable,
  organizationId: string,
  days: readonly string[],
  computedAt: Date,
): Promise<void> {
  await db.execute(sql`insert into ${table} (organization_id, day, computed_at)
      select ${organizationId}, d, ${computedAt.toISOString()}::timestamptz
      from unnest(${sql.param([...days])}::date[]) as d`);
}

/** What `ensureRolledUp` needs of a rollup's repository: the statements on its table of rolled-up days. */
export interface RolledUpDays {
  missingDays(organizationId: string, first: string, last: string): Promise<string[]>;
  markRolledUp(organizationId: string, days: readonly string[], computedAt: Date): Promise<void>;
}

/** How one rollup rolls up its days: its table of rolled-up days, its advisory lock per day, its count. */
export interface DayRollup {
  tx: TransactionHost;
  clock: Clock;
  days: RolledUpDays;
  /** The advisory lock of one of the organization's days, distinct from every other rollup's. */
  lockKey: (day: string) => string;
  /** Counts these days (ascending, YYYY-MM-DD, none rolled up yet) into rollup rows. */
  rollUp: (days: readonly string[]) => Promise<void>;
}

/**
 * Rolls up the days in [first, last] (YYYY-MM-DD) that are not yet, each under its advisory lock, so that readers
 * racing for the same day compute it once. The days are looked up again once the locks are held: another reader may
 * have rolled some up while this one waited for them. The rows and the days' markers commit together.
 */
export async function ensureRolledUp(
  { tx, clock, days, lockKey, rollUp }: DayRollup,
  organizationId: string,
  first: string,
  last: string,
): Promise<void> {
  const missing = await days.missingDays(organizationId, first, last);
  if (missing.length === 0) return;
  await tx.run(async () => {
    await tx.lock(...missing.map((day) => lockKey(day)));
    const still = await days.missingDays(organizationId, first, last);
    if (still.length === 0) return;
    await rollUp(still);
    await days.markRolledUp(organizationId, still, clock.now());
  });
}
