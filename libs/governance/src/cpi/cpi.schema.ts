import {
  boolean,
  date,
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

/**
 * Per organization, UTC day of the latest verdict, agent and verdict kind: how many traces have that verdict (a
 * verdict is a decided review item or feedback, the later of the two deciding; see CpiReadsRepository). Kept for
 * closed days only (computed on first read, and a trace taken out of its day in the transaction of every later
 * verdict on it, which moves it to the open day, or of its purge), so that GET /cpi and GET /cpi/analytics read a
 * few rows a day rather than every decided item and feedback row; the open day is counted live.
 */
export const cpiVerdictRollups = pgTable(
  'cpi_verdict_rollups',
  {
    organizationId: varchar('organization_id', { length: 24 }).notNull(),
    day: date('day', { mode: 'string' }).notNull(),
    agentId: varchar('agent_id', { length: 24 }).notNull(),
    /** A flagged trace: a review item, or feedback given while the trace was flagged. */
    flagged: boolean('flagged').notNull(),
    /** The latest verdict is a rejection or a correction. */
    flagWasRight: boolean('flag_was_right').notNull(),
    /** The latest feedback is a correction. */
    overridden: boolean('overridden').notNull(),
    verdicts: integer('verdicts').notNull(),
  },
  (t) => [
    primaryKey({
      name: 'cpi_verdict_rollups_pk',
      columns: [t.organizationId, t.day, t.agentId, t.flagged, t.flagWasRight, t.overridden],
    }),
  ],
);

/** The closed days whose verdict rollup rows exist (a day without verdicts has a marker and no rows). */
export const cpiVerdictRollupDays = pgTable(
  'cpi_verdict_rollup_days',
  {
    organizationId: varchar('organization_id', { length: 24 }).notNull(),
    day: date('day', { mode: 'string' }).notNull(),
    computedAt: timestamp('computed_at', { withTimezone: true, precision: 3 }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.organizationId, t.day] })],
);
