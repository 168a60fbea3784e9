import { sql } from 'drizzle-orm';
import { jsonb, pgTable, text, timestamp, uniqueIndex, varchar } from 'drizzle-orm/pg-core';

export type Framework = 'iso-42001' | 'eu-ai-act' | 'nist-rmf';
export type ClauseStatus = 'covered' | 'partial' | 'gap' | 'not-applicable';
export type EvidenceRefType = 'fria' | 'policy' | 'audit' | 'incident';

export interface EvidenceRef {
  type: EvidenceRefType;
  id: string;
}

/**
 * An organization's attestation of one clause of one framework (a note of docs/compliance-officers.md,
 * "Compliance mapping").
 */
export const complianceMappingNotes = pgTable(
  'compliance_mapping_notes',
  {
    id: varchar('id', { length: 24 }).primaryKey(),
    organizationId: varchar('organization_id', { length: 24 }).notNull(),
    framework: varchar('framework', { length: 16 }).$type<Framework>().notNull(),
    clauseId: varchar('clause_id', { length: 32 }).notNull(),
    status: varchar('status', { length: 16 }).$type<ClauseStatus>().notNull(),
    evidence: text('evidence'),
    evidenceRefs: jsonb('evidence_refs')
      .$type<EvidenceRef[]>()
      .notNull()
      .default(sql`'[]'::jsonb`),
    reviewedAt: timestamp('reviewed_at', { withTimezone: true, precision: 3 }),
    reviewedBy: varchar('reviewed_by', { length: 24 }),
    /** The reviewer's e-mail at the time: it survives the deletion of the user. */
    reviewedByEmail: varchar('reviewed_by_email', { length: 320 }),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true, precision: 3 }).notNull(),
  },
  (t) => [
    uniqueIndex('compliance_notes_org_framework_clause_uq').on(t.organizationId, t.framework, t.clauseId),
  ],
);

export type ComplianceMappingNoteRow = typeof complianceMappingNotes.$inferSelect;
