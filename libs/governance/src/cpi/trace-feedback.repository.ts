import { Injectable } from '@nestjs/common';
import { and, eq, inArray, sql } from 'drizzle-orm';
import { TransactionHost } from '#platform';
import { type FeedbackAction, traceFeedback, type TraceFeedbackRow } from './cpi.schema.js';

export interface FeedbackSubmission {
  organizationId: string;
  traceId: string;
  agentId: string;
  action: FeedbackAction;
  statusBefore: string;
  originalDecision: unknown;
  correctedDecision: unknown;
  originalConfidence: number;
  correctedConfidence: number | null;
  notes: string | null;
  userEmail: string | null;
  traceCreatedAt: Date;
  at: Date;
}

/** trace_feedback: one row per (organization, trace) holding the latest verdict and the first-seen facts. */
@Injectable()
export class TraceFeedbackRepository {
  constructor(private readonly tx: TransactionHost) {}

  /**
   * Records a submission. The first one fixes statusBefore, the original decision and confidence and firstAt; every
   * later one replaces the verdict fields and counts itself.
   */
  async upsert(organizationId: string, s: FeedbackSubmission): Promise<void> {
    await this.tx.db
      .insert(traceFeedback)
      .values({
        organizationId,
        traceId: s.traceId,
        agentId: s.agentId,
        action: s.action,
        statusBefore: s.statusBefore,
        originalDecision: s.originalDecision,
        correctedDecision: s.correctedDecision,
        originalConfidence: s.originalConfidence,
        correctedConfidence: s.correctedConfidence,
        notes: s.notes,
        userEmail: s.userEmail,
        traceCreatedAt: s.traceCreatedAt,
        firstAt: s.at,
        lastAt: s.at,
        firstCorrectedAt: s.action === 'correct' ? s.at : null,
        submissions: 1,
      })
      .onConflictDoUpdate({
        target: [traceFeedback.organizationId, traceFeedback.traceId],
        set: {
          action: s.action,
          correctedDecision: s.correctedDecision,
          correctedConfidence: s.correctedConfidence,
          notes: s.notes,
          userEmail: s.userEmail,
          lastAt: s.at,
          firstCorrectedAt:
            s.action === 'correct'
              ? sql`coalesce(${traceFeedback.firstCorrectedAt}, ${s.at.toISOString()}::timestamptz)`
              : sql`${traceFeedback.firstCorrectedAt}`,
          submissions: sql`${traceFeedback.submissions} + 1`,
        },
      });
  }

  /** The trace's feedback row (its latest verdict), if any was given: the explanation of a decision lists it. */
  async find(organizationId: string, traceId: string): Promise<TraceFeedbackRow | undefined> {
    const [row] = await this.tx.db
      .select()
      .from(traceFeedback)
      .where(and(eq(traceFeedback.organizationId, organizationId), eq(traceFeedback.traceId, traceId)))
      .limit(1);
    return row;
  }

  /**
   * A subject's erasure: the verdicts' notes are removed; the action, the decision labels, the statuses, the
   * confidences and the times stay, as the decision's skeleton and for the CPI figures.
   */
  async eraseForTraces(organizationId: string, traceIds: readonly string[]): Promise<void> {
    if (traceIds.length === 0) return;
    await this.tx.db
      .update(traceFeedback)
      .set({ notes: null })
      .where(
        and(eq(traceFeedback.organizationId, organizationId), inArray(traceFeedback.traceId, [...traceIds])),
      );
  }

  /** Deletes the feedback of purged traces. */
  async deleteForTraces(organizationId: string, traceIds: readonly string[]): Promise<void> {
    if (traceIds.length === 0) return;
    await this.tx.db
      .delete(traceFeedback)
      .where(
        and(eq(traceFeedback.organizationId, organizationId), inArray(traceFeedback.traceId, [...traceIds])),
      );
  }
}
