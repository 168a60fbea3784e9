import { Injectable } from '@nestjs/common';
import { sql, type SQL } from 'drizzle-orm';
import { TransactionHost } from '#platform';
import { dayOf, markDaysRolledUp, missingRollupDays } from '../rollups/rollup-days.js';
import { ReviewItemsRepository } from '../review/review-items.repository.js';
import { cpiVerdictRollupDays, cpiVerdictRollups, traceFeedback } from './cpi.schema.js';

/** Verdicts counted over some traces: a day's (YYYY-MM-DD), an agent's, or all of them (`key` null). */
export interface VerdictCountRow {
  key: string | null;
  /** Traces with a human verdict: a decided review item (approved or rejected) or feedback. */
  verdicts: number;
  /** Of those, traces that were flagged (a review item, or feedback given while the trace was flagged). */
  decidedFlags: number;
  /** Decided flags whose latest verdict is a rejection or a correction. */
  correctFlags: number;
  /** Decided flags whose latest verdict is an approval. */
  falseFlags: number;
  /** Traces whose latest feedback is a correction (humanOverride true). */
  overrides: number;
}

/**
 * Where a read's verdicts are counted: the rolled-up days up to `last` (YYYY-MM-DD; null: none), and those whose
 * latest verdict came at or after `liveFrom`, counted live (null: every verdict).
 */
export interface VerdictSpans {
  last: string | null;
  liveFrom: Date | null;
}

/** Which traces' verdicts: all of them, those whose latest verdict is at or after a time, or these ids. */
type Traces = { since: Date } | { ids: readonly string[] } | 'all';

type Rows<R> = { rows: R[] };

/**
 * The cpi_verdict_rollups and cpi_verdict_rollup_days tables, and the verdicts computed from the decided review items
 * and trace_feedback that complete them; every method takes the organization id first. Which days are closed, and
 * the locks that keep a day's rollup single, are VerdictRollups' business.
 */
@Injectable()
export class VerdictRollupsRepository {
  constructor(
    private readonly tx: TransactionHost,
    private readonly reviewItems: ReviewItemsRepository,
  ) {}

  /**
   * The spans' verdicts counted by UTC day from `since` on (`by` 'day', with one row for all days, whose `key` is
   * null) or by agent (`by` 'agent').
   */
  async counts(
    organizationId: string,
    spans: VerdictSpans,
    group: { by: 'day'; since: Date } | { by: 'agent' },
  ): Promise<VerdictCountRow[]> {
    const parts: SQL[] = [];
    if (spans.last !== null) {
      parts.push(sql`select day, agent_id, flagged, flag_was_right, overridden, verdicts
        from ${cpiVerdictRollups}
        where organization_id = ${organizationId} and day <= ${spans.last}::date and verdicts > 0`);
    }
    parts.push(sql`select day, agent_id, flagged, flag_was_right, overridden, count(*)::int as verdicts
      from verdict
      ${spans.liveFrom ? sql`where at >= ${spans.liveFrom.toISOString()}::timestamptz` : sql``}
      group by 1, 2, 3, 4, 5`);
    const traces: Traces = spans.liveFrom ? { since: spans.liveFrom } : 'all';
    const grouped =
      group.by === 'agent'
        ? sql`agent_id as key from counted group by agent_id`
        : sql`to_char(day, 'YYYY-MM-DD') as key from counted group by grouping sets ((), (day))
            having grouping(day) = 1 or day >= ${dayOf(group.since.getTime())}::date`;
    const result = await this.tx.db.execute(sql`with ${this.verdictRows(organizationId, traces)},
      counted as (${sql.join(parts, sql` union all `)})
      select coalesce(sum(verdicts), 0)::int as verdicts,
        coalesce(sum(verdicts) filter (where flagged), 0)::int as decided_flags,
        coalesce(sum(verdicts) filter (where flagged and flag_was_right), 0)::int as correct_flags,
        coalesce(sum(verdicts) filter (where flagged and not flag_was_right), 0)::int as false_flags,
        coalesce(sum(verdicts) filter (where overridden), 0)::int as overrides,
        ${grouped}`);
    return (result as unknown as Rows<Record<string, unknown>>).rows.map((r) => ({
      key: r.key === null ? null : String(r.key),
      verdicts: Number(r.verdicts),
      decidedFlags: Number(r.decided_flags),
      correctFlags: Number(r.correct_flags),
      falseFlags: Number(r.false_flags),
      overrides: Number(r.overrides),
    }));
  }

  /** When the organization's earliest verdict came (a lower bound of the first day with a latest verdict). */
  async firstVerdictAt(organizationId: string): Promise<Date | null> {
    const result = await this.tx.db.execute(sql`select least(
        ${this.reviewItems.firstDecidedQuery(organizationId)},
        (select min(${traceFeedback.lastAt}) from ${traceFeedback}
          where ${traceFeedback.organizationId} = ${organizationId})) as first`);
    const first = (result as unknown as Rows<{ first: unknown }>).rows[0]?.first;
    if (first === null || first === undefined) return null;
    return new Date(first as string | Date);
  }

  /** The days in [first, last] (YYYY-MM-DD) not rolled up yet, in order. */
  async missingDays(organizationId: string, first: string, last: string): Promise<string[]> {
    return missingRollupDays(this.tx.db, cpiVerdictRollupDays, organizationId, first, last);
  }

  /**
   * Counts the verdicts of these days (ascending, YYYY-MM-DD) into rollup rows. `fromFirst`: the first of them is
   * the organization's first verdict day, so every verdict is read at once rather than found trace by trace.
   */
  async rollUp(organizationId: string, days: readonly string[], fromFirst: boolean): Promise<void> {
    const since = new Date(`${days[0]}T00:00:00.000Z`);
    await this.tx.db.execute(sql`with ${this.verdictRows(organizationId, fromFirst ? 'all' : { since })}
      insert into ${cpiVerdictRollups}
          (organization_id, day, agent_id, flagged, flag_was_right, overridden, verdicts)
        select ${organizationId}, day, agent_id, flagged, flag_was_right, overridden, count(*)
        from verdict
        where at >= ${since.toISOString()}::timestamptz and day = any(${sql.param([...days])}::date[])
        group by 2, 3, 4, 5, 6`);
  }

  /** Records these days as rolled up. */
  async markRolledUp(organizationId: string, days: readonly string[], computedAt: Date): Promise<void> {
    await markDaysRolledUp(this.tx.db, cpiVerdictRollupDays, organizationId, days, computedAt);
  }

  /**
   * The days (YYYY-MM-DD) of these traces' verdicts as they stand; `ignoreReview`: as if their review items were
   * undecided (the caller has just decided them).
   */
  async daysOf(
    organizationId: string,
    traceIds: readonly string[],
    ignoreReview: boolean,
  ): Promise<string[]> {
    const result = await this.tx.db
      .execute(sql`with ${this.verdictRows(organizationId, { ids: traceIds }, ignoreReview)}
      select distinct to_char(day, 'YYYY-MM-DD') as day from verdict`);
    return (result as unknown as Rows<{ day: string }>).rows.map((r) => r.day);
  }

  /** Takes these traces' verdicts, as they stand, out of the rollup rows of their days (none: no row changes). */
  async subtract(organizationId: string, traceIds: readonly string[], ignoreReview: boolean): Promise<void> {
    await this.tx.db.execute(sql`with ${this.verdictRows(organizationId, { ids: traceIds }, ignoreReview)},
      gone as (
        select day, agent_id, flagged, flag_was_right, overridden, count(*)::int as n
        from verdict group by 1, 2, 3, 4, 5
      )
      update ${cpiVerdictRollups} as v set verdicts = v.verdicts - gone.n
      from gone
      where v.organization_id = ${organizationId} and v.day = gone.day and v.agent_id = gone.agent_id
        and v.flagged = gone.flagged and v.flag_was_right = gone.flag_was_right
        and v.overridden = gone.overridden`);
  }

  /**
   * `verdict`: one row per trace with a human verdict, among `traces`. The review side is a decided item (escalated and
   * pending ones have no verdict yet); the feedback side is trace_feedback's latest action. The later of the two
   * decides whether the flag was right (a rejection or correction), the override is the feedback's correction, and
   * the verdict's time (`at`, its UTC `day`) is the later one's. With `since`, the traces are those with a side at
   * or after it (every trace whose latest verdict is): each side's rows from then on, read by time
   * (review_items_org_decided_idx, trace_feedback_org_last_idx), and its earlier rows of the other side's traces.
   */
  private verdictRows(organizationId: string, traces: Traces, ignoreReview = false): SQL {
    const f = traceFeedback;
    const feedbackColumns = sql`${f.traceId} as trace_id, ${f.agentId} as agent_id,
      ${f.statusBefore} as status_before, ${f.action} as action, ${f.lastAt} as at`;
    const ofOrganization = sql`${f.organizationId} = ${organizationId}`;
    let review: SQL;
    let feedback: SQL;
    let first = sql``;
    if (traces !== 'all' && 'since' in traces) {
      const since = sql`${traces.since.toISOString()}::timestamptz`;
      // Read once, for both sides (materialized: PostgreSQL then looks its traces' items up one by one by trace id
      // rather than reading every item of the organization).
      first = sql`recent_feedback as materialized (
          select ${feedbackColumns} from ${f} where ${ofOrganization} and ${f.lastAt} >= ${since}
        ),`;
      review = sql`${this.reviewItems.decidedQuery(organizationId, { from: traces.since })}
        union all
        ${this.reviewItems.decidedQuery(organizationId, {
          before: traces.since,
          traceIds: sql`select trace_id from recent_feedback`,
        })}`;
      feedback = sql`select * from recent_feedback
        union all
        select ${feedbackColumns} from ${f}
        where ${ofOrganization} and ${f.lastAt} < ${since}
          and ${f.traceId} in (${this.reviewItems.decidedSinceQuery(organizationId, traces.since)})`;
    } else {
      const ids =
        traces === 'all'
          ? undefined
          : sql`select trace_id from unnest(${sql.param([...traces.ids])}::text[]) as ids(trace_id)`;
      review = this.reviewItems.decidedQuery(organizationId, { traceIds: ids });
      feedback = sql`select ${feedbackColumns} from ${f}
        where ${ofOrganization} ${ids ? sql`and ${f.traceId} in (${ids})` : sql``}`;
    }
    return sql`${first}
      review as (
        select * from (${review}) as decided ${ignoreReview ? sql`where false` : sql``}
      ),
      feedback as (${feedback}),
      verdict as (
        select coalesce(f.agent_id, r.agent_id) as agent_id,
          (r.trace_id is not null or f.status_before = 'flagged') as flagged,
          coalesce(case when f.trace_id is not null and (r.trace_id is null or f.at >= r.at)
            then f.action = 'correct' else r.status = 'rejected' end, false) as flag_was_right,
          coalesce(f.action = 'correct', false) as overridden,
          greatest(f.at, r.at) as at,
          (greatest(f.at, r.at) at time zone 'UTC')::date as day
        from review r full outer join feedback f on f.trace_id = r.trace_id
      )`;
  }
}
