import { bigint, pgTable, timestamp, varchar } from 'drizzle-orm/pg-core';

/**
 * Where an organization's audit chain was last verified: the entry (sequence and hash) up to which it held, when a
 * verification from the first entry last passed, and when the checkpoint last moved. Reports verify from here on
 * while the full verification is recent enough (AUDIT_FULL_VERIFY_MAX_AGE_MS), and from the first entry otherwise.
 */
export const auditChainCheckpoints = pgTable('audit_chain_checkpoints', {
  organizationId: varchar('organization_id', { length: 24 }).primaryKey(),
  sequence: bigint('sequence', { mode: 'number' }).notNull(),
  hash: varchar('hash', { length: 64 }).notNull(),
  fullyVerifiedAt: timestamp('fully_verified_at', { withTimezone: true, precision: 3 }).notNull(),
  verifiedAt: timestamp('verified_at', { withTimezone: true, precision: 3 }).notNull(),
});

export type AuditChainCheckpointRow = typeof auditChainCheckpoints.$inferSelect;
