import { sql } from 'drizzle-orm';
import { index, jsonb, pgTable, text, timestamp, varchar } from 'drizzle-orm/pg-core';

export type FriaStatus = 'draft' | 'review' | 'approved' | 'archived';
export type RiskLevel = 'low' | 'medium' | 'high';

/**
 * One structured risk row of an assessment (docs/compliance-officers.md,
 * "Fundamental-rights impact assessments (FRIA)"), stored with its defaults applied.
 */
export interface FriaRisk {
  title: string;
  description?: string;
  likelihood: RiskLevel;
  severity: RiskLevel;
  affectedRights: string[];
  mitigation?: string;
  residualRisk: RiskLevel;
}

/** A fundamental-rights impact assessment (EU AI Act article 27) of one high-risk system. */
export const friaAssessments = pgTable(
  'fria_assessments',
  {
    id: varchar('id', { length: 24 }).primaryKey(),
    organizationId: varchar('organization_id', { length: 24 }).notNull(),
    systemName: varchar('system_name', { length: 200 }).notNull(),
    deployerProfileId: varchar('deployer_profile_id', { length: 64 }),
    purpose: text('purpose'),
    affectedPersons: text('affected_persons'),
    usageContext: text('usage_context'),
    durationOfUse: text('duration_of_use'),
    identifiedRisks: jsonb('identified_risks')
      .$type<FriaRisk[]>()
      .notNull()
      .default(sql`'[]'::jsonb`),
    humanOversightSummary: text('human_oversight_summary'),
    complaintsMechanism: text('complaints_mechanism'),
    status: varchar('status', { length: 10 }).$type<FriaStatus>().notNull(),
    /** SHA-256 (hex) of the RFC 8785 canonical contents, anchored on entering review and on approval. */
    chainHash: varchar('chain_hash', { length: 64 }),
    approvedBy: varchar('approved_by', { length: 24 }),
    approvedAt: timestamp('approved_at', { withTimezone: true, precision: 3 }),
    /** First submission to review: a draft that has one is no longer deletable. */
    firstSubmittedAt: timestamp('first_submitted_at', { withTimezone: true, precision: 3 }),
    createdBy: varchar('created_by', { length: 24 }),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true, precision: 3 }).notNull(),
  },
  (t) => [
    // Ascending, read backwards by `order by updated_at desc, id desc` (see traces_org_created_idx).
    index('fria_org_updated_idx').on(t.organizationId, t.updatedAt, t.id),
    index('fria_org_status_updated_idx').on(t.organizationId, t.status, t.updatedAt, t.id),
  ],
);

export type FriaRow = typeof friaAssessments.$inferSelect;
