import { Injectable } from '@nestjs/common';
import { sql } from 'drizzle-orm';
import { TransactionHost } from '#platform';
import { traceFeedback } from './cpi.schema.js';
import { type VerdictCountRow, VerdictRollups } from './verdict-rollups.js';

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
 * The SQL behind GET /cpi and GET /cpi/analytics that is not in the trace rollups: the verdicts (VerdictRollups) and
 * aggregates over trace_feedback's corrections, never over the traces themselves.
 */
@Injectable()
export class CpiReadsRepository {
  constructor(
    private readonly tx: TransactionHost,
    private readonly verdictRollups: VerdictRollups,
  ) {}

  /**
   * Verdict counts over all traces, and per UTC day (of the latest verdict) from `since` on. A trace with both a
   * review decision and feedback counts once, by whichever came last. From the verdict rollups (VerdictRollups).
   */
  async verdicts(
    organizationId: string,
    since: Date,
  ): Promise<{ total: VerdictCounts; days: DailyVerdictCounts[] }> {
    const rows = await this.verdictRollups.byDay(organizationId, since);
    const counts = ({ key: _, ...counts }: VerdictCountRow): VerdictCounts => counts;
    const total = rows.find((row) => row.key === null)!;
    const days = rows.filter((row) => row.key !== null).map((row) => ({ day: row.key!, ...counts(row) }));
    return { total: counts(total), days };
  }

  /** Traces with a human verdict per agent. */
  async verdictsByAgent(organizationId: string): Promise<Map<string, number>> {
    const rows = await this.verdictRollups.byAgent(organizationId);
    return new Map(rows.map((row) => [row.key!, row.verdicts]));
  }

  /**
   * The most frequent notes of traces whose latest feedback is a correction, compared without case, surrounding
   * space or repeated inner space; each reason is shown as its first spelling in byte order.
   */
  async topCorrectionReasons(organizationId: string, limit: number): Promise<CorrectionReasonCount[]> {
    // Every run of white space (tabs and newlines too) as one space, then trimmed; compared without case. Each
    // distinct note is cleaned once: the notes are grouped as they are first (corrections repeat a few reasons), and
    // `offset 0` keeps PostgreSQL from pushing `spaced <> ''` down into the scan, where it would clean every row.
    const result = await this.tx.db.execute(sql`select reason, n from (
        select left(min(spaced collate "C"), 500) as reason, sum(n)::int as n
        from (
          select btrim(regexp_replace(${traceFeedback.notes}, '[[:space:]]+', ' ', 'g')) as spaced, count(*) as n
          from ${traceFeedback}
          where ${traceFeedback.organizationId} = ${organizationId} and ${traceFeedback.action} = 'correct'
            and ${traceFeedback.notes} is not null
          group by ${traceFeedback.notes}
          offset 0
        ) as notes
        where spaced <> ''
        group by lower(spaced)
      ) as reasons
      order by n desc, reason collate "C" asc
      limit ${limit}`);
    return (result as unknown as { rows: { reason: string; n: number }[] }).rows.map((r) => ({
      reason: String(r.reason),
      count: Number(r.n),
    }));
  }

  /**
   * Over the traces whose latest feedback is a correction, in one pass: the mean confidence before and after, over
   * the corrections that gave a confidence of their own; and how many by the time from the trace's creation to its
   * first correction: under an hour, an hour to a day, a day to a week, longer (each lower bound inclusive).
   */
  async corrections(
    organizationId: string,
  ): Promise<{ confidence: ConfidenceAverages; delays: Record<CorrectionDelayBucket, number> }> {
    const given = sql`${traceFeedback.correctedConfidence} is not null`;
    const delay = sql`${traceFeedback.firstCorrectedAt} - ${traceFeedback.traceCreatedAt}`;
    const result = await this.tx.db.execute(sql`select
        count(*) filter (where ${given})::int as corrections,
        avg(${traceFeedback.originalConfidence}) filter (where ${given})::float8 as original,
        avg(${traceFeedback.correctedConfidence})::float8 as corrected,
        count(*) filter (where ${delay} < interval '1 hour')::int as hour,
        count(*) filter (where ${delay} >= interval '1 hour' and ${delay} < interval '1 day')::int as day,
        count(*) filter (where ${delay} >= interval '1 day' and ${delay} < interval '7 days')::int as week,
        count(*) filter (where ${delay} >= interval '7 days')::int as longer
      from ${traceFeedback}
      where ${traceFeedback.organizationId} = ${organizationId} and ${traceFeedback.action} = 'correct'`);
    const row = (result as unknown as { rows: Record<string, unknown>[] }).rows[0]!;
    const number = (value: unknown): number | null => (value === null ? null : Number(value));
    return {
      confidence: {
        corrections: Number(row.corrections),
        averageOriginal: number(row.original),
        averageCorrected: number(row.corrected),
      },
      delays: {
        '<1h': Number(row.hour),
        '1-24h': Number(row.day),
        '1-7d': Number(row.week),
        '>7d': Number(row.longer),
      },
    };
  }
}
