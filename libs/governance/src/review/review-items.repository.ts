import { Injectable } from '@nestjs/common';
import { and, eq, inArray, isNull, sql, type SQL } from 'drizzle-orm';
import {
  bulkInsert,
  type PageRequest,
  pageWithTotal,
  type Query,
  TransactionHost,
  writeQuery,
} from '#platform';
import type { PolicyResult } from '../traces/trace.schema.js';
import { reviewItems, type ReviewItemRow, type ReviewStatus } from './review-item.schema.js';

/** A decided item: the predicate of review_items_org_decided_idx. */
const DECIDED = sql`${reviewItems.status} in ('approved', 'rejected')`;

export interface ReviewItemFilter {
  status: ReviewStatus;
  agentId?: string;
  /** A user id, or null for unassigned items. */
  assignedTo?: string | null;
  /** Agents the caller may see; null for all. */
  agentScope: string[] | null;
}

export interface ReviewDecisionUpdate {
  status: Exclude<ReviewStatus, 'pending'>;
  decision: 'approve' | 'reject' | 'escalate';
  notes: string | null;
  decidedBy: string | null;
  decidedAt: Date;
}

/**
 * The `decision` column of an item that human feedback on its trace closed (POST /cpi/ingest), beside the decisions a
 * reviewer makes (approve, reject, escalate); its status says which way (see `closeByFeedback`).
 */
export const FEEDBACK_DECISION = 'feedback';

/** How feedback closes its trace's item: `approved` for an approval, `rejected` for a correction. */
export interface ReviewFeedbackClosure {
  status: 'approved' | 'rejected';
  notes: string | null;
  decidedAt: Date;
}

export interface PendingReviewItem {
  id: string;
  organizationId: string;
  traceId: string;
  agentId: string;
  matchedPolicies: PolicyResult[];
  createdAt: Date;
}

/** The review item of a trace flagged at ingestion: pending, unassigned, undecided. */
export function newPendingReviewItem(item: PendingReviewItem): ReviewItemRow {
  return {
    ...item,
    status: 'pending',
    assignedTo: null,
    decision: null,
    notes: null,
    decidedBy: null,
    decidedAt: null,
    updatedAt: item.createdAt,
  };
}

/** The review queue's table. Trace ingestion inserts the pending items it creates through `insertQuery`. */
@Injectable()
export class ReviewItemsRepository {
  constructor(private readonly tx: TransactionHost) {}

  /** The organization's items under the filter, oldest first (a queue is worked from its head). */
  async list(
    organizationId: string,
    filter: ReviewItemFilter,
    page: PageRequest,
  ): Promise<{ rows: ReviewItemRow[]; total: number }> {
    if (filter.agentScope !== null && filter.agentScope.length === 0) return { rows: [], total: 0 };
    const conditions: SQL[] = [
      eq(reviewItems.organizationId, organizationId),
      eq(reviewItems.status, filter.status),
    ];
    if (filter.agentId) conditions.push(eq(reviewItems.agentId, filter.agentId));
    if (filter.agentScope) conditions.push(inArray(reviewItems.agentId, filter.agentScope));
    if (filter.assignedTo !== undefined) {
      conditions.push(
        filter.assignedTo === null
          ? isNull(reviewItems.assignedTo)
          : eq(reviewItems.assignedTo, filter.assignedTo),
      );
    }
    const where = and(...conditions);
    return pageWithTotal(
      this.tx.db,
      reviewItems,
      where,
      this.tx.db
        .select()
        .from(reviewItems)
        .where(where)
        .orderBy(reviewItems.createdAt, reviewItems.id)
        .limit(page.limit)
        .offset(page.offset),
    );
  }

  /**
   * Queries for other modules' aggregates (the CPI verdicts, see VerdictRollups). The organization's decided items,
   * as rows (trace_id, agent_id, status 'approved' | 'rejected', at = decided_at); escalated and pending items have no
   * verdict yet. `traceIds`: only the items of the traces that query gives (one column, trace_id); `from`: decided at
   * or after it (review_items_org_decided_idx); `before`: decided before it (or at no recorded time).
   */
  decidedQuery(organizationId: string, only: { traceIds?: SQL; from?: Date; before?: Date } = {}): SQL {
    const { traceIds, from, before } = only;
    return sql`select ${reviewItems.traceId} as trace_id, ${reviewItems.agentId} as agent_id,
        ${reviewItems.status} as status, ${reviewItems.decidedAt} as at
      from ${reviewItems}
      where ${reviewItems.organizationId} = ${organizationId} and ${DECIDED}
        ${traceIds ? sql`and ${reviewItems.traceId} in (${traceIds})` : sql``}
        ${from ? sql`and ${reviewItems.decidedAt} >= ${from.toISOString()}::timestamptz` : sql``}
        ${before ? sql`and coalesce(${reviewItems.decidedAt} < ${before.toISOString()}::timestamptz, true)` : sql``}`;
  }

  /** The traces (one column, trace_id) whose items were decided at or after `since` (review_items_org_decided_idx). */
  decidedSinceQuery(organizationId: string, since: Date): SQL {
    return sql`select ${reviewItems.traceId} as trace_id from ${reviewItems}
      where ${reviewItems.organizationId} = ${organizationId} and ${DECIDED}
        and ${reviewItems.decidedAt} >= ${since.toISOString()}::timestamptz`;
  }

  /** The organization's earliest decision, as a scalar subquery (review_items_org_decided_idx). */
  firstDecidedQuery(organizationId: string): SQL {
    return sql`(select min(${reviewItems.decidedAt}) from ${reviewItems}
      where ${reviewItems.organizationId} = ${organizationId} and ${DECIDED})`;
  }

  async find(organizationId: string, id: string): Promise<ReviewItemRow | undefined> {
    const [row] = await this.tx.db
      .select()
      .from(reviewItems)
      .where(and(eq(reviewItems.organizationId, organizationId), eq(reviewItems.id, id)))
      .limit(1);
    return row;
  }

  /**
   * Records a decision on an item that is in one of `from`, as one conditional update: of concurrent decisions on
   * one item, the first to commit wins and the others find it no longer in `from` (undefined).
   */
  async decide(
    organizationId: string,
    id: string,
    from: ReviewStatus[],
    update: ReviewDecisionUpdate,
  ): Promise<ReviewItemRow | undefined> {
    const [row] = await this.tx.db
      .update(reviewItems)
      .set({ ...update, updatedAt: update.decidedAt })
      .where(
        and(
          eq(reviewItems.organizationId, organizationId),
          eq(reviewItems.id, id),
          inArray(reviewItems.status, from),
        ),
      )
      .returning();
    return row;
  }

  /**
   * Closes the trace's undecided item (pending or escalated) because human feedback resolved the trace: one
   * conditional update, so that of feedback and a concurrent review decision the first to commit wins and the other
   * finds the item decided. Undefined when the trace has no undecided item.
   */
  async closeByFeedback(
    organizationId: string,
    traceId: string,
    closure: ReviewFeedbackClosure,
  ): Promise<ReviewItemRow | undefined> {
    const [row] = await this.tx.db
      .update(reviewItems)
      .set({
        status: closure.status,
        decision: FEEDBACK_DECISION,
        notes: closure.notes,
        decidedBy: null,
        decidedAt: closure.decidedAt,
        updatedAt: closure.decidedAt,
      })
      .where(
        and(
          eq(reviewItems.organizationId, organizationId),
          eq(reviewItems.traceId, traceId),
          inArray(reviewItems.status, ['pending', 'escalated']),
        ),
      )
      .returning();
    return row;
  }

  async assign(
    organizationId: string,
    id: string,
    assignedTo: string | null,
    at: Date,
  ): Promise<ReviewItemRow | undefined> {
    const [row] = await this.tx.db
      .update(reviewItems)
      .set({ assignedTo, updatedAt: at })
      .where(and(eq(reviewItems.organizationId, organizationId), eq(reviewItems.id, id)))
      .returning();
    return row;
  }

  /** A multi-row insert, for the pipelined transaction of trace ingestion (no statement when there are none). */
  insertQuery(rows: readonly ReviewItemRow[]): Query<void> {
    return writeQuery(...(rows.length > 0 ? [bulkInsert(reviewItems, rows)] : []));
  }

  /** The undecided items (pending and escalated), of one agent or all: how many, and since when the oldest has waited. */
  async backlog(
    organizationId: string,
    agentId?: string | null,
  ): Promise<{ pending: number; escalated: number; oldest: Date | null }> {
    const [row] = await this.tx.db
      .select({
        pending: sql<number>`count(*) filter (where ${reviewItems.status} = 'pending')::int`,
        escalated: sql<number>`count(*) filter (where ${reviewItems.status} = 'escalated')::int`,
        oldest: sql<string | null>`min(${reviewItems.createdAt})`,
      })
      .from(reviewItems)
      .where(
        and(
          eq(reviewItems.organizationId, organizationId),
          inArray(reviewItems.status, ['pending', 'escalated']),
          agentId ? eq(reviewItems.agentId, agentId) : undefined,
        ),
      );
    return {
      pending: Number(row?.pending ?? 0),
      escalated: Number(row?.escalated ?? 0),
      oldest: row?.oldest ? new Date(row.oldest) : null,
    };
  }

  /** Deletes the items of purged traces. */
  /** A subject's erasure: the notes of these items (of its traces), which may quote the content, are removed. */
  async eraseNotes(organizationId: string, ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.tx.db
      .update(reviewItems)
      .set({ notes: null })
      .where(and(eq(reviewItems.organizationId, organizationId), inArray(reviewItems.id, [...ids])));
  }

  async deleteForTraces(organizationId: string, traceIds: readonly string[]): Promise<void> {
    if (traceIds.length === 0) return;
    await this.tx.db
      .delete(reviewItems)
      .where(
        and(eq(reviewItems.organizationId, organizationId), inArray(reviewItems.traceId, [...traceIds])),
      );
  }
}
