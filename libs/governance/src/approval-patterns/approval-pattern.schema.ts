import { sql } from 'drizzle-orm';
import { index, integer, jsonb, pgTable, timestamp, uniqueIndex, varchar } from 'drizzle-orm/pg-core';

export type ApprovalPatternStatus = 'observing' | 'pending_signoff' | 'active';

/**
 * A recurring kind of flagged trace and how reviewers decided it: the signature is the agent, the output's action
 * and the sorted ids of the policies that matched. Each approve or reject of a review item with that signature is
 * one observation. At 50 observations with 95 % approvals it awaits an owner's or admin's signoff; once active,
 * later flagged traces with the signature are approved at ingestion.
 */
export const approvalPatterns = pgTable(
  'approval_patterns',
  {
    id: varchar('id', { length: 24 }).primaryKey(),
    organizationId: varchar('organization_id', { length: 24 }).notNull(),
    /** SHA-256 (hex) of the canonical [agentId, action, policyIds]. */
    signature: varchar('signature', { length: 64 }).notNull(),
    agentId: varchar('agent_id', { length: 24 }).notNull(),
    /** `outputDecision.action` of the traces, null when they have none. */
    action: varchar('action', { length: 512 }),
    policyIds: jsonb('policy_ids')
      .$type<string[]>()
      .notNull()
      .default(sql`'[]'::jsonb`),
    status: varchar('status', { length: 16 }).$type<ApprovalPatternStatus>().notNull(),
    observations: integer('observations').notNull().default(0),
    approvals: integer('approvals').notNull().default(0),
    signedOffBy: varchar('signed_off_by', { length: 24 }),
    signedOffAt: timestamp('signed_off_at', { withTimezone: true, precision: 3 }),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true, precision: 3 }).notNull(),
  },
  (t) => [
    uniqueIndex('approval_patterns_org_signature_uq').on(t.organizationId, t.signature),
    index('approval_patterns_org_status_idx').on(t.organizationId, t.status, t.updatedAt),
  ],
);

export type ApprovalPatternRow = typeof approvalPatterns.$inferSelect;
