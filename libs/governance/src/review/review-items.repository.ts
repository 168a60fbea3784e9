import { Injectable } from '@nestjs/common';
import { bulkInsert, type Query, writeQuery } from '#platform';
import type { PolicyResult } from '../traces/trace.schema.js';
import { reviewItems, type ReviewItemRow } from './review-item.schema.js';

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
  /** A multi-row insert, for the pipelined transaction of trace ingestion (no statement when there are none). */
  insertQuery(rows: readonly ReviewItemRow[]): Query<void> {
    return writeQuery(...(rows.length > 0 ? [bulkInsert(reviewItems, rows)] : []));
  }
}
