import { Injectable } from '@nestjs/common';
import { sql, type SQL } from 'drizzle-orm';
import { TransactionHost } from '#platform';
import { markDaysRolledUp, missingRollupDays } from '../rollups/rollup-days.js';
import { traceDailyRollups, traceRollupDays, traces, type TraceStatus } from './trace.schema.js';
import type { RolledUpTrace, RollupFilter, RollupKey, RollupRow, SummedRow } from './trace-rollups.js';

const ROLLUP_COLUMNS: Record<RollupKey, string> = {
  day: 'day',
  agentId: 'agent_id',
  status: 'status',
  humanOverride: 'human_override',
};

/** A range of created_at counted live: from `from` on, up to `to` (inclusive) or `before` (exclusive). */
export interface LiveRange {
  from?: Date;
  to?: Date;
  before?: Date;
}

/** Where a read's traces are counted: the rolled-up days [first, last] (YYYY-MM-DD), and the ranges counted live. */
export interface RollupSpans {
  closed: { first: string; last: string } | null;
  live: LiveRange[];
}

type Rows<R> = { rows: R[] };

/**
 * The trace_daily_rollups and trace_rollup_days tables, and the live counts over traces that complete them; every
 * method takes the organization id first. Which days are closed, and the locks that keep a day's rollup single,
 * are TraceRollups' business.
 */
@Injectable()
export class TraceRollupsRepository {
  constructor(private readonly tx: TransactionHost) {}

  /** The spans' rows by day (UTC), agent, status and override. */
  async rows(organizationId: string, spans: RollupSpans, filter: RollupFilter): Promise<RollupRow[]> {
    const result = await this.tx.db.execute(union(organizationId, spans, filter));
    return (result as unknown as Rows<Record<string, unknown>>).rows.map((r) => ({
      day: String(r.day),
      agentId: String(r.agent_id),
      status: r.status as TraceStatus,
      humanOverride: r.human_override === true,
      traces: Number(r.traces),
      confidenceSum: Number(r.confidence_sum),
    }));
  }

  /** The spans' rows summed over the keys given (none: one row); fields absent from `by` are absent. */
  async summed(
    organizationId: string,
    by: readonly RollupKey[],
    spans: RollupSpans,
    filter: RollupFilter,
  ): Promise<SummedRow[]> {
    const keys = by.map((key) => sql.raw(ROLLUP_COLUMNS[key]));
    const select = keys.length > 0 ? sql`${sql.join(keys, sql`, `)}, ` : sql``;
    const group = keys.length > 0 ? sql` group by ${sql.join(keys, sql`, `)}` : sql``;
    const result = await this.tx.db.execute(sql`select ${select}coalesce(sum(traces), 0)::bigint as traces,
        coalesce(sum(confidence_sum), 0)::float8 as confidence_sum
      from (${union(organizationId, spans, filter)}) as rolled${group}`);
    return (result as unknown as Rows<Record<string, unknown>>).rows.map((r) => summedRow(r, by));
  }

  /**
   * `summed` over several groupings (each a list of keys) in one statement, as grouping sets over one read of the
   * spans: the rows of each grouping, in the order given (told apart by which keys `grouping()` says are absent).
   */
  async summedEach(
    organizationId: string,
    groupings: readonly (readonly RollupKey[])[],
    spans: RollupSpans,
    filter: RollupFilter,
  ): Promise<SummedRow[][]> {
    const keys = [...new Set(groupings.flat())];
    if (keys.length === 0) throw new Error('summedEach needs a key');
    const column = (key: RollupKey) => sql.raw(ROLLUP_COLUMNS[key]);
    const columns = sql.join(keys.map(column), sql`, `);
    const sets = groupings.map((set) => sql`(${sql.join(set.map(column), sql`, `)})`);
    const result = await this.tx.db.execute(sql`select ${columns}, grouping(${columns}) as absent,
        coalesce(sum(traces), 0)::bigint as traces, coalesce(sum(confidence_sum), 0)::float8 as confidence_sum
      from (${union(organizationId, spans, filter)}) as rolled
      group by grouping sets (${sql.join(sets, sql`, `)})`);
    // grouping() has a bit per key, the last key's the lowest, set when the key is not in the row's grouping.
    const absentOf = (set: readonly RollupKey[]) =>
      keys.reduce((mask, key, i) => (set.includes(key) ? mask : mask | (1 << (keys.length - 1 - i))), 0);
    const rows = (result as unknown as Rows<Record<string, unknown>>).rows;
    return groupings.map((set) =>
      rows.filter((r) => Number(r.absent) === absentOf(set)).map((r) => summedRow(r, set)),
    );
  }

  /**
   * How many traces the spans hold: the rollups' sum plus a live count of each range. Outside a transaction each
   * is its own query, on its own connection, so that the live counts (a range cutting a day, the open day) run side
   * by side.
   */
  async count(organizationId: string, spans: RollupSpans, filter: RollupFilter): Promise<number> {
    const { closed, live } = spans;
    const { agents, status } = filterConditions(filter);
    const counts = live.map(
      (range) => sql`select count(*) as n from ${traces}
        where organization_id = ${organizationId} and ${liveRange(range)} ${agents} ${status}`,
    );
    if (closed) {
      counts.push(sql`select coalesce(sum(traces), 0) as n from ${traceDailyRollups}
        where organization_id = ${organizationId} and day >= ${closed.first}::date and day <= ${closed.last}::date
          ${agents} ${status}`);
    }
    const results = await Promise.all(counts.map((query) => this.tx.db.execute(query)));
    return results.reduce<number>(
      (total, result) => total + Number((result as unknown as Rows<{ n: unknown }>).rows[0]!.n),
      0,
    );
  }

  /** A changed trace leaves the row it was counted in, on a rolled-up day (none: no row changes). */
  async removeTrace(
    organizationId: string,
    day: string,
    trace: Omit<RolledUpTrace, 'createdAt'>,
  ): Promise<void> {
    await this.tx.db.execute(sql`update ${traceDailyRollups}
        set traces = traces - 1, confidence_sum = confidence_sum - ${trace.confidence}
        where organization_id = ${organizationId} and day = ${day}::date and agent_id = ${trace.agentId}
          and status = ${trace.status} and human_override = ${trace.humanOverride}`);
  }

  /** A changed trace joins the row it now belongs to, if its day is rolled up. */
  async addTraceIfRolledUp(
    organizationId: string,
    day: string,
    trace: Omit<RolledUpTrace, 'createdAt'>,
  ): Promise<void> {
    const rolledUp = sql`exists (select 1 from ${traceRollupDays} where organization_id = ${organizationId} and day = ${day}::date)`;
    await this.tx.db.execute(sql`insert into ${traceDailyRollups}
          (organization_id, day, agent_id, status, human_override, traces, confidence_sum)
        select ${organizationId}, ${day}::date, ${trace.agentId}, ${trace.status}, ${trace.humanOverride}, 1,
          ${trace.confidence}::float8
        where ${rolledUp}
        on conflict (organization_id, day, agent_id, status, human_override) do update
          set traces = ${traceDailyRollups.traces} + 1,
              confidence_sum = ${traceDailyRollups.confidenceSum} + excluded.confidence_sum`);
  }

  /** The days in [first, last] (YYYY-MM-DD) that are no longer rolled up. */
  async deleteDays(organizationId: string, first: string, last: string): Promise<void> {
    await this.tx.db.execute(sql`delete from ${traceRollupDays}
        where organization_id = ${organizationId} and day >= ${first}::date and day <= ${last}::date`);
  }

  /** The rollup rows of the days in [first, last]. */
  async deleteRows(organizationId: string, first: string, last: string): Promise<void> {
    await this.tx.db.execute(sql`delete from ${traceDailyRollups}
        where organization_id = ${organizationId} and day >= ${first}::date and day <= ${last}::date`);
  }

  /** When the organization's oldest trace was created (index traces_org_created_idx, read backwards). */
  async firstTraceAt(organizationId: string): Promise<Date | null> {
    const result = await this.tx.db.execute(
      sql`select min(created_at) as first from ${traces} where organization_id = ${organizationId}`,
    );
    const first = (result as unknown as Rows<{ first: unknown }>).rows[0]?.first;
    if (first === null || first === undefined) return null;
    return new Date(first as string | Date);
  }

  /** The days in [first, last] (YYYY-MM-DD) not rolled up yet, in order. */
  async missingDays(organizationId: string, first: string, last: string): Promise<string[]> {
    return missingRollupDays(this.tx.db, traceRollupDays, organizationId, first, last);
  }

  /** Counts the traces of these days (ascending, YYYY-MM-DD) into rollup rows. */
  async rollUp(organizationId: string, days: readonly string[]): Promise<void> {
    await this.tx.db.execute(sql`insert into ${traceDailyRollups}
          (organization_id, day, agent_id, status, human_override, traces, confidence_sum)
        select organization_id, (created_at at time zone 'UTC')::date, agent_id, status, human_override, count(*),
          sum(confidence)
        from ${traces}
        where organization_id = ${organizationId}
          and created_at >= ${`${days[0]}T00:00:00.000Z`}::timestamptz
          and created_at < (${days[days.length - 1]}::date + 1)::timestamp at time zone 'UTC'
          and (created_at at time zone 'UTC')::date = any(${sql.param([...days])}::date[])
        group by 1, 2, 3, 4, 5`);
  }

  /** Records these days as rolled up. */
  async markRolledUp(organizationId: string, days: readonly string[], computedAt: Date): Promise<void> {
    await markDaysRolledUp(this.tx.db, traceRollupDays, organizationId, days, computedAt);
  }
}

/** A summed row as read, with the keys of `by`. */
function summedRow(r: Record<string, unknown>, by: readonly RollupKey[]): SummedRow {
  return {
    ...(by.includes('day') ? { day: String(r.day) } : {}),
    ...(by.includes('agentId') ? { agentId: String(r.agent_id) } : {}),
    ...(by.includes('status') ? { status: r.status as TraceStatus } : {}),
    ...(by.includes('humanOverride') ? { humanOverride: r.human_override === true } : {}),
    traces: Number(r.traces),
    confidenceSum: Number(r.confidence_sum),
  };
}

/** The rollup rows of the closed days and the live counts of the ranges, as one union. */
function union(organizationId: string, { closed, live }: RollupSpans, filter: RollupFilter): SQL {
  const { agents, status } = filterConditions(filter);
  const parts: SQL[] = [];
  if (closed) {
    parts.push(sql`select day::text as day, agent_id, status, human_override, traces, confidence_sum
        from ${traceDailyRollups}
        where organization_id = ${organizationId} and day >= ${closed.first}::date and day <= ${closed.last}::date
          and traces > 0 ${agents} ${status}`);
  }
  // Grouped by the date itself (hashed; a text day would be sorted), written as the rollups' day::text.
  for (const range of live) {
    parts.push(sql`select ((created_at at time zone 'UTC')::date)::text as day, agent_id, status,
          human_override, count(*)::int as traces, sum(confidence)::float8 as confidence_sum
        from ${traces}
        where organization_id = ${organizationId} and ${liveRange(range)} ${agents} ${status}
        group by (created_at at time zone 'UTC')::date, agent_id, status, human_override`);
  }
  return sql.join(parts, sql` union all `);
}

/** A live range's bounds on created_at, `true` when it has none. */
function liveRange({ from, to, before }: LiveRange): SQL {
  const bounds = [
    from && sql`created_at >= ${from.toISOString()}::timestamptz`,
    to && sql`created_at <= ${to.toISOString()}::timestamptz`,
    before && sql`created_at < ${before.toISOString()}::timestamptz`,
  ].filter((b): b is SQL => b !== undefined);
  return bounds.length > 0 ? sql.join(bounds, sql` and `) : sql`true`;
}

/** The filter's agent and status conditions, each `and …` or empty: the same on rollup rows and on traces. */
function filterConditions(filter: RollupFilter): { agents: SQL; status: SQL } {
  return {
    agents: filter.agentIds ? sql`and agent_id = any(${sql.param([...filter.agentIds])}::text[])` : sql``,
    status: filter.status ? sql`and status = ${filter.status}` : sql``,
  };
}
