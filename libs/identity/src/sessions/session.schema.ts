import { sql } from 'drizzle-orm';
import { boolean, index, pgTable, timestamp, uniqueIndex, varchar } from 'drizzle-orm/pg-core';

/**
 * A session is one minted JWT. Its id is the id of the audit entry that opened it (auth.login, auth.register),
 * which is how `revoke-session` names it.
 */
export const sessions = pgTable(
  'sessions',
  {
    id: varchar('id', { length: 24 }).primaryKey(),
    jti: varchar('jti', { length: 64 }).notNull(),
    userId: varchar('user_id', { length: 24 }).notNull(),
    organizationId: varchar('organization_id', { length: 24 }).notNull(),
    ip: varchar('ip', { length: 64 }),
    userAgent: varchar('user_agent', { length: 512 }),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true, precision: 3 }).notNull(),
    revokedAt: timestamp('revoked_at', { withTimezone: true, precision: 3 }),
    /**
     * Opened by an organization's SSO: the IdP vouched for the user in that organization only, so the session (and
     * its refreshes) may not switch to another one.
     */
    ssoPinned: boolean('sso_pinned').notNull().default(false),
    /** Opened by SAML: the NameID, its format and the IdP's SessionIndex, which single logout names. */
    samlNameId: varchar('saml_name_id', { length: 512 }),
    samlNameIdFormat: varchar('saml_name_id_format', { length: 256 }),
    samlSessionIndex: varchar('saml_session_index', { length: 256 }),
  },
  (t) => [
    uniqueIndex('sessions_jti_uq').on(t.jti),
    index('sessions_user_idx').on(t.userId, t.expiresAt),
    // Organization erasure and export read a table by organization, the export in key order (migration 0022
    // builds these indexes concurrently, outside a transaction).
    index('sessions_org_idx').on(t.organizationId, t.id).concurrently(),
    index('sessions_saml_name_id_idx')
      .on(t.samlNameId)
      .where(sql`${t.samlNameId} is not null`),
  ],
);

/** The jti blacklist, checked on every authenticated request; rows are purged after the token's natural expiry. */
export const revokedTokens = pgTable(
  'revoked_tokens',
  {
    jti: varchar('jti', { length: 64 }).primaryKey(),
    userId: varchar('user_id', { length: 24 }).notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true, precision: 3 }).notNull(),
    revokedAt: timestamp('revoked_at', { withTimezone: true, precision: 3 }).notNull(),
  },
  (t) => [index('revoked_tokens_expires_idx').on(t.expiresAt)],
);

export type SessionRow = typeof sessions.$inferSelect;
