import { Injectable } from '@nestjs/common';
import { Clock, TransactionHost } from '#platform';
import { DAY_MS, dayOf, ensureRolledUp, ROLLUP_GRACE_MS, startOfDay } from '../rollups/rollup-days.js';
import type { TraceStatus } from './trace.schema.js';
import { type LiveRange, type RollupSpans, TraceRollupsRepository } from './trace-rollups.repository.js';

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

/** A row of `summed`: the keys it was grouped by (the others absent), how many traces and their confidence sum. */
export type SummedRow = Partial<Omit<RollupRow, 'traces' | 'confidenceSum'>> &
  Pick<RollupRow, 'traces' | 'confidenceSum'>;

/** What `summed` can group by. */
export type RollupKey = 'day' | 'agentId' | 'status' | 'humanOverride';

/** What of a trace the rollups count. */
export interface RolledUpTrace {
  agentId: string;
  createdAt: Date;
  status: TraceStatus;
  humanOverride: boolean;
  confidence: number;
}

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
    private readonly repo: TraceRollupsRepository,
  ) {}

  /** The rows of the filter's traces, by day (UTC), agent, status and override. */
  async rows(organizationId: string, filter: RollupFilter = {}): Promise<RollupRow[]> {
    return this.repo.rows(organizationId, await this.split(organizationId, filter), filter);
  }

  /**
   * The filter's traces summed in SQL over the keys given (none: one row for all of them), for reads that want a
   * few figures rather than every day's rows. Fields absent from `by` are absent from the rows.
   */
  async summed(
    organizationId: string,
    by: readonly RollupKey[],
    filter: RollupFilter = {},
  ): Promise<SummedRow[]> {
    return this.repo.summed(organizationId, by, await this.split(organizationId, filter), filter);
  }

  /**
   * `summed` over several groupings at once (each a list of keys, at least one in all), from one read of the filter's
   * traces: the rows of each grouping, in the order given.
   */
  async summedEach(
    organizationId: string,
    groupings: readonly (readonly RollupKey[])[],
    filter: RollupFilter = {},
  ): Promise<SummedRow[][]> {
    return this.repo.summedEach(organizationId, groupings, await this.split(organizationId, filter), filter);
  }

  /** How many traces the filter matches (what a list's `total` says): the rollups plus a live count of the rest. */
  async count(organizationId: string, filter: RollupFilter = {}): Promise<number> {
    return this.repo.count(organizationId, await this.split(organizationId, filter), filter);
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
      await this.repo.removeTrace(organizationId, day, before);
      await this.repo.addTraceIfRolledUp(organizationId, day, { ...after, agentId: before.agentId });
    });
  }

  /** In the transaction that deleted traces created in [from, to]: their days are counted anew on next read. */
  async forgetDays(organizationId: string, from: Date, to: Date): Promise<void> {
    await this.tx.run(async () => {
      const first = dayOf(from.getTime());
      const last = dayOf(to.getTime());
      await this.repo.deleteDays(organizationId, first, last);
      await this.repo.deleteRows(organizationId, first, last);
    });
  }

  /**
   * Splits the filter's range into closed whole days (rolled up, computing the missing ones first) and the rest:
   * one or two ranges of created_at (before and after the closed days), counted live. Two ranges rather than one
   * condition with `or`, which PostgreSQL would apply as a filter over the whole span of the index.
   */
  private async split(organizationId: string, filter: RollupFilter): Promise<RollupSpans> {
    const closedBefore = startOfDay(this.clock.nowMs() - ROLLUP_GRACE_MS);
    const fromMs = filter.from?.getTime();
    const toMs = filter.to?.getTime();
    // Whole days inside [from, to]: the first starts at or after `from`, the last ends (exclusive) by to + 1 ms.
    const firstDay =
      fromMs === undefined ? null : startOfDay(fromMs) === fromMs ? fromMs : startOfDay(fromMs) + DAY_MS;
    const endDay = Math.min(closedBefore, toMs === undefined ? Infinity : startOfDay(toMs + 1));
    const whole: LiveRange = { from: filter.from, to: filter.to };
    if (firstDay !== null && firstDay >= endDay) return { closed: null, live: [whole] };
    const first = firstDay === null ? await this.firstDay(organizationId) : dayOf(firstDay);
    if (first === null || Date.parse(first) >= endDay) return { closed: null, live: [whole] };
    const last = dayOf(endDay - DAY_MS);
    await this.ensure(organizationId, first, last);
    return {
      closed: { first, last },
      live: [
        { from: filter.from, before: new Date(Date.parse(first)) },
        { from: new Date(endDay), to: filter.to },
      ],
    };
  }

  /** The day of the organization's oldest trace. */
  private async firstDay(organizationId: string): Promise<string | null> {
    const first = await this.repo.firstTraceAt(organizationId);
    return first === null ? null : dayOf(first.getTime());
  }

  /** Rolls up the days in [first, last] that are not yet, each under its advisory lock. */
  private async ensure(organizationId: string, first: string, last: string): Promise<void> {
    await ensureRolledUp(
      {
        tx: this.tx,
        clock: this.clock,
        days: this.repo,
        lockKey: (day) => lockKey(organizationId, day),
        rollUp: (days) => this.repo.rollUp(organizationId, days),
      },
      organizationId,
      first,
      last,
    );
  }
}

const lockKey = (organizationId: string, day: string): string => `trace-rollup:${organizationId}:${day}`;
