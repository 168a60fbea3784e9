import {
  doublePrecision,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  varchar,
} from 'drizzle-orm/pg-core';

export type FeedbackAction = 'approve' | 'correct';

/**
 * The human feedback on one trace (POST /cpi/ingest): its latest verdict, with what the analytics need, so that
 * GET /cpi and GET /cpi/analytics read this small table instead of the traces.
 */
export const traceFeedback = pgTable(
  'trace_feedback',
  {
    organizationId: varchar('organization_id', { length: 24 }).notNull(),
    traceId: varchar('trace_id', { length: 24 }).notNull(),
    agentId: varchar('agent_id', { length: 24 }).notNull(),
    action: varchar('action', { length: 10 }).$type<FeedbackAction>().notNull(),
    /** The trace's status when the first feedback arrived (approved, flagged, blocked). */
    statusBefore: varchar('status_before', { length: 10 }).notNull(),
    originalDecision: jsonb('original_decision').$type<unknown>(),
    correctedDecision: jsonb('corrected_decision').$type<unknown>(),
    originalConfidence: doublePrecision('original_confidence').notNull(),
    correctedConfidence: doublePrecision('corrected_confidence'),
    notes: text('notes'),
    userEmail: varchar('user_email', { length: 320 }),
    traceCreatedAt: timestamp('trace_created_at', { withTimezone: true, precision: 3 }).notNull(),
    firstAt: timestamp('first_at', { withTimezone: true, precision: 3 }).notNull(),
    lastAt: timestamp('last_at', { withTimezone: true, precision: 3 }).notNull(),
    /** The first correction's time (kept when it is repeated): what time-to-correction measures from createdAt. */
    firstCorrectedAt: timestamp('first_corrected_at', { withTimezone: true, precision: 3 }),
    submissions: integer('submissions').notNull().default(1),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.traceId] }),
    index('trace_feedback_org_last_idx').on(t.organizationId, t.lastAt),
    index('trace_feedback_org_agent_idx').on(t.organizationId, t.agentId),
  ],
);

export type TraceFeedbackRow = typeof traceFeedback.$inferSelect;
