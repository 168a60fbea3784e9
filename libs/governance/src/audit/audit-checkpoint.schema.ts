import { bigint, pgTable, timestamp, varchar } from 'drizzle-orm/pg-core';

/**
 * The verified prefix of an organization's audit chain: the entry (sequence and hash) up to which it last held,
 * when a verification from the first entry last passed, and when the prefix last moved. Verifications continue from
 * here (reports only while the full verification is recent enough, AUDIT_FULL_VERIFY_MAX_AGE_MS). Not to be confused
 * with the signed checkpoints (audit-signing.schema.ts); the table keeps its first name.
 */
export const auditChainCheckpoints = pgTable('audit_chain_checkpoints', {
  organizationId: varchar('organization_id', { length: 24 }).primaryKey(),
  sequence: bigint('sequence', { mode: 'number' }).notNull(),
  hash: varchar('hash', { length: 64 }).notNull(),
  fullyVerifiedAt: timestamp('fully_verified_at', { withTimezone: true, precision: 3 }).notNull(),
  verifiedAt: timestamp('verified_at', { withTimezone: true, precision: 3 }).notNull(),
  /**
   * The break the last failing verification found (its entry and reason), until a verification from the first
   * entry passes: meanwhile every verification starts from the first entry, nothing is signed, and the checkpoint
   * job leaves the organization alone.
   */
  brokenSequence: bigint('broken_sequence', { mode: 'number' }),
  brokenReason: varchar('broken_reason', { length: 32 }),
  brokenAt: timestamp('broken_at', { withTimezone: true, precision: 3 }),
});

export type AuditChainCheckpointRow = typeof auditChainCheckpoints.$inferSelect;
