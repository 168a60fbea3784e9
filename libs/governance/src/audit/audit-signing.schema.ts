import { bigint, char, index, pgTable, text, timestamp, uniqueIndex, varchar } from 'drizzle-orm/pg-core';

/**
 * Every public key that has signed audit checkpoints: the current one is added at start-up,
 * older ones stay after a rotation so that their checkpoints remain verifiable. Operator-wide, not per organization.
 * See docs/compliance-officers.md, "Audit log".
 */
export const auditSigningKeys = pgTable('audit_signing_keys', {
  /** RFC 7638 JWK thumbprint (SHA-256, base64url) of the public key. */
  keyId: varchar('key_id', { length: 64 }).primaryKey(),
  publicKeyPem: text('public_key_pem').notNull(),
  createdAt: timestamp('created_at', { withTimezone: true, precision: 3, mode: 'date' }).notNull(),
});

/**
 * Signed checkpoints: an organization's chain head (sequence and hash) at a time, signed with Ed25519 over the RFC
 * 8785 canonical JSON of `{organizationId, sequence, hash, createdAt, keyId}`. Handed to outsiders (webhooks, the
 * event stream, the API), they show a later rewrite or truncation of the chain.
 */
export const auditCheckpoints = pgTable(
  'audit_checkpoints',
  {
    id: varchar('id', { length: 24 }).primaryKey(),
    organizationId: varchar('organization_id', { length: 24 }).notNull(),
    sequence: bigint('sequence', { mode: 'number' }).notNull(),
    hash: char('hash', { length: 64 }).notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3, mode: 'date' }).notNull(),
    keyId: varchar('key_id', { length: 64 }).notNull(),
    signature: varchar('signature', { length: 128 }).notNull(),
  },
  (t) => [
    // One checkpoint of a head per key: a head signed twice (two instances, or on demand) is kept once.
    uniqueIndex('audit_checkpoints_org_sequence_key_uq').on(t.organizationId, t.sequence, t.keyId),
    index('audit_checkpoints_org_created_idx').on(t.organizationId, t.createdAt, t.id),
  ],
);

export type AuditSigningKeyRow = typeof auditSigningKeys.$inferSelect;
export type AuditCheckpointRow = typeof auditCheckpoints.$inferSelect;
