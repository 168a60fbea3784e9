import { sql } from 'drizzle-orm';
import { index, jsonb, pgTable, text, timestamp, uniqueIndex, varchar } from 'drizzle-orm/pg-core';
import type { PolicyResult } from '../traces/trace.schema.js';

export type ReviewStatus = 'pending' | 'approved' | 'rejected' | 'escalated';

/** A flagged trace waiting for a human decision (created at ingestion; the queue API is a later module). */
export const reviewItems = pgTable(
  'review_items',
  {
    id: varchar('id', { length: 24 }).primaryKey(),
    organizationId: varchar('organization_id', { length: 24 }).notNull(),
    traceId: varchar('trace_id', { length: 24 }).notNull(),
    agentId: varchar('agent_id', { length: 24 }).notNull(),
    status: varchar('status', { length: 10 }).$type<ReviewStatus>().notNull(),
    matchedPolicies: jsonb('matched_policies')
      .$type<PolicyResult[]>()
      .notNull()
      .default(sql`'[]'::jsonb`),
    assignedTo: varchar('assigned_to', { length: 24 }),
    decision: varchar('decision', { length: 10 }),
    notes: text('notes'),
    decidedBy: varchar('decided_by', { length: 24 }),
    decidedAt: timestamp('decided_at', { withTimezone: true, precision: 3 }),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true, precision: 3 }).notNull(),
  },
  (t) => [
    uniqueIndex('review_items_trace_uq').on(t.traceId),
    index('review_items_org_status_created_idx').on(t.organizationId, t.status, t.createdAt),
    // Decided items by decision time: the CPI reads count the open day's verdicts live from it, and find the
    // organization's first verdict day (the closed days are in cpi_verdict_rollups).
    index('review_items_org_decided_idx')
      .on(t.organizationId, t.decidedAt)
      .where(sql`status in ('approved', 'rejected')`),
  ],
);

export type ReviewItemRow = typeof reviewItems.$inferSelect;
