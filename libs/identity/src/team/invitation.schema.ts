import { index, pgTable, text, timestamp, uniqueIndex, varchar } from 'drizzle-orm/pg-core';

export type InvitationStatus = 'pending' | 'accepted' | 'revoked';

/**
 * One row per invitation. The token is stored twice: SHA-256 for lookup, and sealed with the secret box
 * because a resend mails the same token again. It never appears in an API response.
 */
export const invitations = pgTable(
  'invitations',
  {
    id: varchar('id', { length: 24 }).primaryKey(),
    organizationId: varchar('organization_id', { length: 24 }).notNull(),
    email: varchar('email', { length: 254 }).notNull(),
    role: varchar('role', { length: 10 }).$type<'owner' | 'admin' | 'member' | 'viewer'>().notNull(),
    tokenHash: varchar('token_hash', { length: 64 }).notNull(),
    tokenEncrypted: text('token_encrypted').notNull(),
    status: varchar('status', { length: 10 }).$type<InvitationStatus>().notNull(),
    invitedBy: varchar('invited_by', { length: 24 }).notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true, precision: 3 }).notNull(),
    acceptedBy: varchar('accepted_by', { length: 24 }),
    acceptedAt: timestamp('accepted_at', { withTimezone: true, precision: 3 }),
    revokedAt: timestamp('revoked_at', { withTimezone: true, precision: 3 }),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true, precision: 3 }).notNull(),
  },
  (t) => [
    uniqueIndex('invitations_token_hash_uq').on(t.tokenHash),
    index('invitations_org_status_idx').on(t.organizationId, t.status, t.expiresAt),
    index('invitations_org_email_idx').on(t.organizationId, t.email),
  ],
);

export type InvitationRow = typeof invitations.$inferSelect;
