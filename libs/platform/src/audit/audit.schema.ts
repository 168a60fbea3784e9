import { sql } from 'drizzle-orm';
import { bigint, char, index, jsonb, pgTable, timestamp, uniqueIndex, varchar } from 'drizzle-orm/pg-core';

export interface AuditActor {
  type: 'user' | 'api_key' | 'agent' | 'scim' | 'system';
  id: string | null;
  email: string | null;
}

/** One hash chain per organization: sequence 1, 2, 3 … with each entry's prevHash the previous entry's hash. */
export const auditEntries = pgTable(
  'audit_entries',
  {
    id: varchar('id', { length: 24 }).primaryKey(),
    organizationId: varchar('organization_id', { length: 24 }).notNull(),
    sequence: bigint('sequence', { mode: 'number' }).notNull(),
    eventType: varchar('event_type', { length: 100 }).notNull(),
    userId: varchar('user_id', { length: 24 }),
    actor: jsonb('actor').$type<AuditActor>().notNull(),
    targetType: varchar('target_type', { length: 64 }),
    targetId: varchar('target_id', { length: 128 }),
    metadata: jsonb('metadata').$type<Record<string, unknown>>().notNull(),
    ip: varchar('ip', { length: 64 }),
    userAgent: varchar('user_agent', { length: 512 }),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3, mode: 'date' }).notNull(),
    prevHash: char('prev_hash', { length: 64 }).notNull(),
    hash: char('hash', { length: 64 }).notNull(),
  },
  (t) => [
    uniqueIndex('audit_entries_org_sequence_uq').on(t.organizationId, t.sequence),
    index('audit_entries_org_created_idx').on(t.organizationId, t.createdAt),
    index('audit_entries_org_event_idx').on(t.organizationId, t.eventType),
    index('audit_entries_org_user_idx').on(t.organizationId, t.userId),
    // A resource's history (GET /fria/:id/history). Trace entries, nearly all of the log, are left out: ingestion
    // pays nothing for it, and traces have no history route.
    index('audit_entries_org_target_idx')
      .on(t.organizationId, t.targetType, t.targetId, t.sequence)
      .where(sql`target_type <> 'trace'`),
    // A trace's content corrections, whose latest recorded content hash GET /traces/:id/verify checks: the CPI
    // verdicts only, a small part of the trace entries, so ingestion pays nothing for it.
    index('audit_entries_org_trace_verdict_idx')
      .on(t.organizationId, t.targetId, t.sequence)
      .where(sql`target_type = 'trace' and event_type in ('cpi.approved', 'cpi.corrected')`),
  ],
);

export type AuditEntryRow = typeof auditEntries.$inferSelect;
