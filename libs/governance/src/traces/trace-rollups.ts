import { Injectable } from '@nestjs/common';
import { sql, type SQL } from 'drizzle-orm';
import { Clock, TransactionHost } from '#platform';
import { traceDailyRollups, traceRollupDays, traces, type TraceStatus } from './trace.schema.js';

const DAY_MS = 86_400_000;
/**
 * A day is closed (rolled up) once it ended this long ago: a trace is stamped with the time it was received and
 * commits within its request, so no trace of a closed day can still be on its way.
 */
export const ROLLUP_GRACE_MS = 10 * 60_000;

/** Which traces: the organization's, optionally some agents', within [from, to] (both inclusive). */
export interface RollupFilter {
  /** null or absent: every agent. */
  agentIds?: readonly string[] | null;
  status?: TraceStatus;
  from?: Date;
  to?: Date;
}

/** Traces of one UTC day, agent, status and override: how many and the sum of their confidence. */
export interface RollupRow {
  day: string;
  agentId: string;
  status: TraceStatus;
  humanOverride: boolean;
  traces: number;
  confidenceSum: number;
}

/** What `summed` can group by. */
export type RollupKey = 'day' | 'agentId' | 'status' | 'humanOverride';
const ROLLUP_COLUMNS: Record<RollupKey, string> = {
  day: 'day',
  agentId: 'agent_id',
  status: 'status',
  humanOverride: 'human_override',
};

/** What of a trace the rollups count. */
export interface RolledUpTrace {
  agentId: string;
  createdAt: Date;
  status: TraceStatus;
  humanOverride: boolean;
  confidence: number;
}

const dayOf = (ms: number): string => new Date(ms).toISOString().slice(0, 10);
const startOfDay = (ms: number): number => Math.floor(ms / DAY_MS) * DAY_MS;

/**
 * Counts and confidence sums of an organization's traces per day, agent, status and override, for what reads
 * millions of traces: list totals, the agents' analytics, the CPI rollups. Closed days come from
 * `trace_daily_rollups`, computed on first read (under a per-day advisory lock) and adjusted in the transaction of
 * every later change of a trace of that day (`traceChanged`); the open days, and a range's partial days at its
 * edges, are counted live from the traces' indexes. Traces are created at the clock's present, so a closed day
 * changes only through `traceChanged`; a module that deletes traces calls `forgetDays` in its transaction.
 */
@Injectable()
export class TraceRollups {
  constructor(
    private readonly tx: TransactionHost,
    private readonly clock: Clock,
  ) {}

  /** The rows of the filter's traces, by day (UTC), agent, status and override. */
  async rows(organizationId: string, filter: RollupFilter = {}): Promise<RollupRow[]> {
    const result = await this.tx.db.execute(await this.union(organizationId, filter));
    return (result as unknown as { rows: Record<string, unknown>[] }).rows.map((r) => ({
      day: String(r.day),
      agentId: String(r.agent_id),
      status: r.status as TraceStatus,
      humanOverride: r.human_override === true,
      traces: Number(r.traces),
      confidenceSum: Number(r.confidence_sum),
    }));
  }

  /**
   * The filter's traces summed in SQL over the keys given (none: one row for all of them), for reads that want a
   * few figures rather than every day's rows. Fields absent from `by` are absent from the rows.
   */
  async summed(
    organizationId: string,
    by: readonly RollupKey[],
    filter: RollupFilter = {},
  ): Promise<
    Array<Partial<Omit<RollupRow, 'traces' | 'confidenceSum'>> & Pick<RollupRow, 'traces' | 'confidenceSum'>>
  > {
    const keys = by.map((key) => sql.raw(ROLLUP_COLUMNS[key]));
    const select = keys.length > 0 ? sql`${sql.join(keys, sql`, `)}, ` : sql``;
    const group = keys.length > 0 ? sql` group by ${sql.join(keys, sql`, `)}` : sql``;
    const result = await this.tx.db.execute(sql`select ${select}coalesce(sum(traces), 0)::bigint as traces,
        coalesce(sum(confidence_sum), 0)::float8 as confidence_sum
      from (${await this.union(organizationId, filter)}) as rolled${group}`);
    return (result as unknown as { rows: Record<string, unknown>[] }).rows.map((r) => ({
      ...(by.includes('day') ? { day: String(r.day) } : {}),
      ...(by.includes('agentId') ? { agentId: String(r.agent_id) } : {}),
      ...(by.includes('status') ? { status: r.status as TraceStatus } : {}),
      ...(by.includes('humanOverride') ? { humanOverride: r.human_override === true } : {}),
      traces: Number(r.traces),
      confidenceSum: Number(r.confidence_sum),
    }));
  }

  /** The rollup rows of the filter's closed days and the live counts of the rest, as one union. */
  private async union(organizationId: string, filter: RollupFilter): Promise<SQL> {
    const { closed, live } = await this.split(organizationId, filter);
    const { agents, status } = filterConditions(filter);
    const parts: SQL[] = [];
    if (closed) {
      parts.push(sql`select day::text as day, agent_id, status, human_override, traces, confidence_sum
        from ${traceDailyRollups}
        where organization_id = ${organizationId} and day >= ${closed.first}::date and day <= ${closed.last}::date
          and traces > 0 ${agents} ${status}`);
    }
    for (const range of live) {
      parts.push(sql`select to_char(created_at at time zone 'UTC', 'YYYY-MM-DD') as day, agent_id, status,
          human_override, count(*)::int as traces, sum(confidence)::float8 as confidence_sum
        from ${traces}
        where organization_id = ${organizationId} and ${range} ${agents} ${status}
        group by 1, 2, 3, 4`);
    }
    return sql.join(parts, sql` union all `);
  }

  /** How many traces the filter matches (what a list's `total` says): the rollups plus a live count of the rest. */
  async count(organizationId: string, filter: RollupFilter = {}): Promise<number> {
    const { closed, live } = await this.split(organizationId, filter);
    const { agents, status } = filterConditions(filter);
    const rolled = closed
      ? sql`(select coalesce(sum(traces), 0) from ${traceDailyRollups}
          where organization_id = ${organizationId} and day >= ${closed.first}::date and day <= ${closed.last}::date
            ${agents} ${status})`
      : sql`0`;
    const counted = live.map(
      (range) => sql`(select count(*) from ${traces}
        where organization_id = ${organizationId} and ${range} ${agents} ${status})`,
    );
    const result = await this.tx.db.execute(
      sql`select ${rolled}::bigint + ${sql.join(counted, sql` + `)} as total`,
    );
    return Number((result as unknown as { rows: { total: unknown }[] }).rows[0]!.total);
  }

  /**
   * In the transaction that changed a trace's status, override or confidence: moves it between the rollup rows of
   * its day, if that day is rolled up already (otherwise the day's first read counts it as it is then).
   */
  async traceChanged(
    organizationId: string,
    before: RolledUpTrace,
    after: Omit<RolledUpTrace, 'agentId' | 'createdAt'>,
  ): Promise<void> {
    if (
      before.status === after.status &&
      before.humanOverride === after.humanOverride &&
      before.confidence === after.confidence
    ) {
      return;
    }
    const day = dayOf(before.createdAt.getTime());
    await this.tx.run(async () => {
      await this.tx.lock(lockKey(organizationId, day));
      const rolledUp = sql`exists (select 1 from ${traceRollupDays} where organization_id = ${organizationId} and day = ${day}::date)`;
      await this.tx.db.execute(sql`update ${traceDailyRollups}
        set traces = traces - 1, confidence_sum = confidence_sum - ${before.confidence}
        where organization_id = ${organizationId} and day = ${day}::date and agent_id = ${before.agentId}
          and status = ${before.status} and human_override = ${before.humanOverride}`);
      await this.tx.db.execute(sql`insert into ${traceDailyRollups}
          (organization_id, day, agent_id, status, human_override, traces, confidence_sum)
        select ${organizationId}, ${day}::date, ${before.agentId}, ${after.status}, ${after.humanOverride}, 1,
          ${after.confidence}::float8
        where ${rolledUp}
        on conflict (organization_id, day, agent_id, status, human_override) do update
          set traces = ${traceDailyRollups.traces} + 1,
              confidence_sum = ${traceDailyRollups.confidenceSum} + excluded.confidence_sum`);
    });
  }

  /** In the transaction that deleted traces created in [from, to]: their days are counted anew on next read. */
  async forgetDays(organizationId: string, from: Date, to: Date): Promise<void> {
    await this.tx.run(async () => {
      const first = dayOf(from.getTime());
      const last = dayOf(to.getTime());
      await this.tx.db.execute(sql`delete from ${traceRollupDays}
        where organization_id = ${organizationId} and day >= ${first}::date and day <= ${last}::date`);
      await this.tx.db.execute(sql`delete from ${traceDailyRollups}
        where organization_id = ${organizationId} and day >= ${first}::date and day <= ${last}::date`);
    });
  }

  /**
   * Splits the filter's range into closed whole days (rolled up, computing the missing ones first) and the rest:
   * one or two ranges of created_at (before and after the closed days), counted live. Two ranges rather than one
   * condition with `or`, which PostgreSQL would apply as a filter over the whole span of the index.
   */
  private async split(
    organizationId: string,
    filter: RollupFilter,
  ): Promise<{ closed: { first: string; last: string } | null; live: SQL[] }> {
    const closedBefore = startOfDay(this.clock.nowMs() - ROLLUP_GRACE_MS);
    const fromMs = filter.from?.getTime();
    const toMs = filter.to?.getTime();
    // Whole days inside [from, to]: the first starts at or after `from`, the last ends (exclusive) by to + 1 ms.
    const firstDay =
      fromMs === undefined ? null : startOfDay(fromMs) === fromMs ? fromMs : startOfDay(fromMs) + DAY_MS;
    const endDay = Math.min(closedBefore, toMs === undefined ? Infinity : startOfDay(toMs + 1));
    const range = (lower: SQL | undefined, upper: SQL | undefined): SQL => {
      const bounds = [lower, upper].filter((b): b is SQL => b !== undefined);
      return bounds.length > 0 ? sql.join(bounds, sql` and `) : sql`true`;
    };
    const from = filter.from ? sql`created_at >= ${filter.from.toISOString()}::timestamptz` : undefined;
    const to = filter.to ? sql`created_at <= ${filter.to.toISOString()}::timestamptz` : undefined;
    if (firstDay !== null && firstDay >= endDay) return { closed: null, live: [range(from, to)] };
    const first = firstDay === null ? await this.firstDay(organizationId) : dayOf(firstDay);
    if (first === null || Date.parse(first) >= endDay) return { closed: null, live: [range(from, to)] };
    const last = dayOf(endDay - DAY_MS);
    await this.ensure(organizationId, first, last);
    const start = `${first}T00:00:00.000Z`;
    const end = new Date(endDay).toISOString();
    return {
      closed: { first, last },
      live: [
        range(from, sql`created_at < ${start}::timestamptz`),
        range(sql`created_at >= ${end}::timestamptz`, to),
      ],
    };
  }

  /** The day of the organization's oldest trace (index traces_org_created_idx, read backwards). */
  private async firstDay(organizationId: string): Promise<string | null> {
    const result = await this.tx.db.execute(
      sql`select min(created_at) as first from ${traces} where organization_id = ${organizationId}`,
    );
    const first = (result as unknown as { rows: { first: unknown }[] }).rows[0]?.first;
    if (first === null || first === undefined) return null;
    return dayOf(new Date(first as string | Date).getTime());
  }

  /** Rolls up the days in [first, last] that are not yet, each under its advisory lock. */
  private async ensure(organizationId: string, first: string, last: string): Promise<void> {
    const missing = await this.missingDays(organizationId, first, last);
    if (missing.length === 0) return;
    await this.tx.run(async () => {
      await this.tx.lock(...missing.map((day) => lockKey(organizationId, day)));
      // Another reader may have rolled some up while this one waited for the locks.
      const still = await this.missingDays(organizationId, first, last);
      if (still.length === 0) return;
      const days = sql.param(still);
      await this.tx.db.execute(sql`insert into ${traceDailyRollups}
          (organization_id, day, agent_id, status, human_override, traces, confidence_sum)
        select organization_id, (created_at at time zone 'UTC')::date, agent_id, status, human_override, count(*),
          sum(confidence)
        from ${traces}
        where organization_id = ${organizationId}
          and created_at >= ${`${still[0]}T00:00:00.000Z`}::timestamptz
          and created_at < (${still[still.length - 1]}::date + 1)::timestamp at time zone 'UTC'
          and (created_at at time zone 'UTC')::date = any(${days}::date[])
        group by 1, 2, 3, 4, 5`);
      await this.tx.db.execute(sql`insert into ${traceRollupDays} (organization_id, day, computed_at)
        select ${organizationId}, d, ${this.clock.now().toISOString()}::timestamptz from unnest(${days}::date[]) as d`);
    });
  }

  private async missingDays(organizationId: string, first: string, last: string): Promise<string[]> {
    const result = await this.tx.db.execute(sql`select to_char(d, 'YYYY-MM-DD') as day
      from generate_series(${first}::date, ${last}::date, interval '1 day') as d
      where not exists (select 1 from ${traceRollupDays} r where r.organization_id = ${organizationId} and r.day = d::date)
      order by d`);
    return (result as unknown as { rows: { day: string }[] }).rows.map((r) => r.day);
  }
}

/** The filter's agent and status conditions, each `and …` or empty: the same on rollup rows and on traces. */
function filterConditions(filter: RollupFilter): { agents: SQL; status: SQL } {
  return {
    agents: filter.agentIds ? sql`and agent_id = any(${sql.param([...filter.agentIds])}::text[])` : sql``,
    status: filter.status ? sql`and status = ${filter.status}` : sql``,
  };
}

const lockKey = (organizationId: string, day: string): string => `trace-rollup:${organizationId}:${day}`;
