import { Injectable } from '@nestjs/common';
import { sql, type SQL } from 'drizzle-orm';
import { TransactionHost } from '#platform';
import { ReviewItemsRepository } from '../review/review-items.repository.js';
import { traceFeedback } from './cpi.schema.js';

/** Human verdicts counted over some traces (all of them, or those of one UTC day). */
export interface VerdictCounts {
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

export interface DailyVerdictCounts extends VerdictCounts {
  day: string;
}

export interface CorrectionReasonCount {
  reason: string;
  count: number;
}

export interface ConfidenceAverages {
  corrections: number;
  averageOriginal: number | null;
  averageCorrected: number | null;
}

export type CorrectionDelayBucket = '<1h' | '1-24h' | '1-7d' | '>7d';

/**
 * The SQL behind GET /cpi and GET /cpi/analytics that is not in the trace rollups: aggregates over the decided
 * review items and trace_feedback (one row per trace with a verdict), never over the traces themselves.
 */
@Injectable()
export class CpiReadsRepository {
  constructor(
    private readonly tx: TransactionHost,
    private readonly reviewItems: ReviewItemsRepository,
  ) {}

  /**
   * Verdict counts over all traces, and per UTC day (of the latest verdict) from `since` on. A trace with both a
   * review decision and feedback counts once, by whichever came last.
   */
  async verdicts(
    organizationId: string,
    since: Date,
  ): Promise<{ total: VerdictCounts; days: DailyVerdictCounts[] }> {
    const counts = sql`count(*)::int as verdicts,
      count(*) filter (where flagged)::int as decided_flags,
      count(*) filter (where flagged and flag_was_right)::int as correct_flags,
      count(*) filter (where flagged and not flag_was_right)::int as false_flags,
      count(*) filter (where overridden)::int as overrides`;
    const result = await this.tx.db.execute(sql`with ${this.verdictRows(organizationId)}
      select null as day, ${counts} from verdict
      union all
      select to_char(at at time zone 'UTC', 'YYYY-MM-DD') as day, ${counts} from verdict
      where at >= ${since.toISOString()}::timestamptz
      group by 1`);
    const rows = (result as unknown as { rows: Record<string, unknown>[] }).rows.map((r) => ({
      day: r.day === null ? null : String(r.day),
      verdicts: Number(r.verdicts),
      decidedFlags: Number(r.decided_flags),
      correctFlags: Number(r.correct_flags),
      falseFlags: Number(r.false_flags),
      overrides: Number(r.overrides),
    }));
    const [total] = rows.filter((r) => r.day === null);
    const days = rows.filter((r): r is DailyVerdictCounts => r.day !== null);
    const { day: _, ...totals } = total!;
    return { total: totals, days };
  }

  /** Traces with a human verdict per agent. */
  async verdictsByAgent(organizationId: string): Promise<Map<string, number>> {
    const result = await this.tx.db.execute(sql`with ${this.verdictRows(organizationId)}
      select agent_id, count(*)::int as verdicts from verdict group by agent_id`);
    return new Map(
      (result as unknown as { rows: { agent_id: string; verdicts: number }[] }).rows.map((r) => [
        r.agent_id,
        Number(r.verdicts),
      ]),
    );
  }

  /**
   * The most frequent notes of traces whose latest feedback is a correction, compared without case, surrounding
   * space or repeated inner space; each reason is shown as its first spelling in byte order.
   */
  async topCorrectionReasons(organizationId: string, limit: number): Promise<CorrectionReasonCount[]> {
    // Every run of white space (tabs and newlines too) as one space, then trimmed; compared without case.
    const spaced = sql`btrim(regexp_replace(${traceFeedback.notes}, '[[:space:]]+', ' ', 'g'))`;
    const result = await this.tx.db.execute(sql`select reason, n from (
        select left(min(${spaced} collate "C"), 500) as reason, count(*)::int as n
        from ${traceFeedback}
        where ${traceFeedback.organizationId} = ${organizationId} and ${traceFeedback.action} = 'correct'
          and ${traceFeedback.notes} is not null and ${spaced} <> ''
        group by lower(${spaced})
      ) as reasons
      order by n desc, reason collate "C" asc
      limit ${limit}`);
    return (result as unknown as { rows: { reason: string; n: number }[] }).rows.map((r) => ({
      reason: String(r.reason),
      count: Number(r.n),
    }));
  }

  /** Mean confidence before and after, over the corrections that gave a confidence of their own. */
  async confidenceAverages(organizationId: string): Promise<ConfidenceAverages> {
    const result = await this.tx.db.execute(sql`select count(*)::int as corrections,
        avg(${traceFeedback.originalConfidence})::float8 as original,
        avg(${traceFeedback.correctedConfidence})::float8 as corrected
      from ${traceFeedback}
      where ${traceFeedback.organizationId} = ${organizationId} and ${traceFeedback.action} = 'correct'
        and ${traceFeedback.correctedConfidence} is not null`);
    const row = (result as unknown as { rows: Record<string, unknown>[] }).rows[0]!;
    const number = (value: unknown): number | null => (value === null ? null : Number(value));
    return {
      corrections: Number(row.corrections),
      averageOriginal: number(row.original),
      averageCorrected: number(row.corrected),
    };
  }

  /**
   * Traces whose latest feedback is a correction, by the time from the trace's creation to its first correction:
   * under an hour, an hour to a day, a day to a week, longer (each lower bound inclusive).
   */
  async correctionDelays(organizationId: string): Promise<Record<CorrectionDelayBucket, number>> {
    const delay = sql`${traceFeedback.firstCorrectedAt} - ${traceFeedback.traceCreatedAt}`;
    const result = await this.tx.db.execute(sql`select
        count(*) filter (where ${delay} < interval '1 hour')::int as hour,
        count(*) filter (where ${delay} >= interval '1 hour' and ${delay} < interval '1 day')::int as day,
        count(*) filter (where ${delay} >= interval '1 day' and ${delay} < interval '7 days')::int as week,
        count(*) filter (where ${delay} >= interval '7 days')::int as longer
      from ${traceFeedback}
      where ${traceFeedback.organizationId} = ${organizationId} and ${traceFeedback.action} = 'correct'
        and ${traceFeedback.firstCorrectedAt} is not null`);
    const row = (result as unknown as { rows: Record<string, unknown>[] }).rows[0]!;
    return {
      '<1h': Number(row.hour),
      '1-24h': Number(row.day),
      '1-7d': Number(row.week),
      '>7d': Number(row.longer),
    };
  }

  /**
   * `verdict`: one row per trace with a human verdict. The review side is a decided item (escalated and pending
   * ones have no verdict yet); the feedback side is trace_feedback's latest action. The later of the two decides
   * whether the flag was right (a rejection or correction) and the override is the feedback's correction.
   */
  private verdictRows(organizationId: string): SQL {
    return sql`review as (${this.reviewItems.decidedQuery(organizationId)}),
      feedback as (
        select ${traceFeedback.traceId} as trace_id, ${traceFeedback.agentId} as agent_id,
          ${traceFeedback.statusBefore} as status_before, ${traceFeedback.action} as action,
          ${traceFeedback.lastAt} as at
        from ${traceFeedback}
        where ${traceFeedback.organizationId} = ${organizationId}
      ),
      verdict as (
        select coalesce(f.agent_id, r.agent_id) as agent_id,
          (r.trace_id is not null or f.status_before = 'flagged') as flagged,
          case when f.trace_id is not null and (r.trace_id is null or f.at >= r.at)
            then f.action = 'correct' else r.status = 'rejected' end as flag_was_right,
          coalesce(f.action = 'correct', false) as overridden,
          greatest(f.at, r.at) as at
        from review r full outer join feedback f on f.trace_id = r.trace_id
      )`;
  }
}
