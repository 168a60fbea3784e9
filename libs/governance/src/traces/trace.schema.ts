import { sql } from 'drizzle-orm';
import {
  boolean,
  date,
  doublePrecision,
  integer,
  index,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  varchar,
} from 'drizzle-orm/pg-core';
import type { PiiEntity } from '#platform';

export type TraceStatus = 'approved' | 'flagged' | 'blocked' | 'success';

export interface PolicyResult {
  policyId: string;
  name: string;
  outcome: 'block' | 'flag';
}

/** One decision of an agent, as ingested, with the outcome of policy evaluation. */
export const traces = pgTable(
  'traces',
  {
    id: varchar('id', { length: 24 }).primaryKey(),
    organizationId: varchar('organization_id', { length: 24 }).notNull(),
    agentId: varchar('agent_id', { length: 24 }).notNull(),
    status: varchar('status', { length: 10 }).$type<TraceStatus>().notNull(),
    confidence: doublePrecision('confidence').notNull(),
    /** The content: null only once the trace's subject was erased (`erasedAt`). */
    inputContext: jsonb('input_context').$type<Record<string, unknown>>(),
    outputDecision: jsonb('output_decision').$type<Record<string, unknown>>(),
    metadata: jsonb('metadata').$type<Record<string, unknown>>(),
    rationale: text('rationale'),
    schemaVersion: varchar('schema_version', { length: 10 }).notNull(),
    humanOverride: boolean('human_override').notNull().default(false),
    policyResults: jsonb('policy_results')
      .$type<PolicyResult[]>()
      .notNull()
      .default(sql`'[]'::jsonb`),
    reviewItemId: varchar('review_item_id', { length: 24 }),
    /** Prompt and output text (bounded), indexed with pg_trgm for GET /traces/:id/similar. */
    searchText: text('search_text').notNull(),
    /**
     * 32 hex: the random salt of the content hash in the trace's audit entry (`metadata.contentHash`, see
     * trace-content.ts). Null for traces stored before content hashing, and once erased: the hash can then no
     * longer be linked to any content.
     */
    contentSalt: varchar('content_salt', { length: 32 }),
    /**
     * The audit entry that records the current content's hash: the trace's own entry, then the entry of each CPI
     * verdict that changed the content. Audit entries of traces are not indexed by target (ingestion would pay for
     * it); the full content check (GET /audit/verify?content=true) also checks that no later entry supersedes it.
     */
    contentEntryId: varchar('content_entry_id', { length: 24 }),
    /** HMAC of the client's `subjectRef` under the organization's subject key (subjects/subject-key.ts); never the ref. */
    subjectHash: varchar('subject_hash', { length: 64 }),
    /**
     * How many values of each PII type masking replaced in the content at ingestion (`{iban: 2}`); `{}` when it found
     * none, null when the organization did not mask (traces/pii-masking.ts). Types and counts only.
     */
    piiMasked: jsonb('pii_masked').$type<Partial<Record<PiiEntity, number>>>(),
    /** When the subject's content was erased (POST /subjects/:ref/erasure); the skeleton stays. */
    erasedAt: timestamp('erased_at', { withTimezone: true, precision: 3 }),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true, precision: 3 }).notNull(),
  },
  (t) => [
    // A subject's decisions (access, report, erasure, holds): only traces that carry a subject are indexed.
    index('traces_org_subject_idx')
      .on(t.organizationId, t.subjectHash, t.createdAt, t.id)
      .where(sql`subject_hash is not null`),
    // Ascending, read backwards by the lists' `order by created_at desc, id desc` (a DESC index is NULLS LAST as
    // generated, which that order does not match); id last so that a filtered page needs no sort.
    index('traces_org_created_idx').on(t.organizationId, t.createdAt, t.id),
    index('traces_org_agent_created_idx').on(t.organizationId, t.agentId, t.createdAt, t.id),
    index('traces_org_status_created_idx').on(t.organizationId, t.status, t.createdAt, t.id),
    // Traces that matched a policy (flagged or blocked at ingestion; a minority): the compliance report's policy
    // coverage reads them without scanning the period's other traces, and ingestion pays only for those.
    index('traces_org_matched_idx')
      .on(t.organizationId, t.createdAt)
      .where(sql`policy_results <> '[]'::jsonb`),
    // Low-confidence traces (below 0.5, LOW_CONFIDENCE_BELOW): the alerts' low_confidence_rate and the digest's list
    // count them over a window without reading the window's other traces.
    index('traces_org_low_confidence_idx')
      .on(t.organizationId, t.createdAt)
      .where(sql`confidence < 0.5`),
    index('traces_search_trgm_idx').using('gin', t.searchText.op('gin_trgm_ops')),
  ],
);

/** Idempotency-Key of POST /traces, per organization, honoured for 24 hours. */
export const traceIdempotencyKeys = pgTable(
  'trace_idempotency_keys',
  {
    organizationId: varchar('organization_id', { length: 24 }).notNull(),
    key: varchar('key', { length: 255 }).notNull(),
    traceId: varchar('trace_id', { length: 24 }).notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.key] }),
    index('trace_idempotency_created_idx').on(t.createdAt),
  ],
);

export type TraceRow = typeof traces.$inferSelect;

/**
 * Per organization, UTC day, agent, status and override: how many traces and the sum of their confidence. Kept for
 * closed days only (computed on first read, adjusted in the transaction of every later change of a trace of that
 * day), so that counts and averages over millions of traces read a few hundred rows; the open day is counted live.
 */
export const traceDailyRollups = pgTable(
  'trace_daily_rollups',
  {
    organizationId: varchar('organization_id', { length: 24 }).notNull(),
    day: date('day', { mode: 'string' }).notNull(),
    agentId: varchar('agent_id', { length: 24 }).notNull(),
    status: varchar('status', { length: 10 }).$type<TraceStatus>().notNull(),
    humanOverride: boolean('human_override').notNull(),
    traces: integer('traces').notNull(),
    confidenceSum: doublePrecision('confidence_sum').notNull(),
  },
  (t) => [primaryKey({ columns: [t.organizationId, t.day, t.agentId, t.status, t.humanOverride] })],
);

/** The closed days whose rollup rows exist (a day with no traces has a marker and no rows). */
export const traceRollupDays = pgTable(
  'trace_rollup_days',
  {
    organizationId: varchar('organization_id', { length: 24 }).notNull(),
    day: date('day', { mode: 'string' }).notNull(),
    computedAt: timestamp('computed_at', { withTimezone: true, precision: 3 }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.organizationId, t.day] })],
);
