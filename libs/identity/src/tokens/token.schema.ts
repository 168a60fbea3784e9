import { sql } from 'drizzle-orm';
import { index, jsonb, pgTable, timestamp, uniqueIndex, varchar } from 'drizzle-orm/pg-core';

export const TOKEN_PURPOSES = ['signup', 'password_reset', 'magic_link', 'stream'] as const;
export type TokenPurpose = (typeof TOKEN_PURPOSES)[number];

/**
 * Single-use tokens sent by e-mail or handed to a client (signup verification, password reset, magic link,
 * stream). Only the SHA-256 of the token is stored; consuming one is a single conditional update.
 */
export const oneTimeTokens = pgTable(
  'one_time_tokens',
  {
    id: varchar('id', { length: 24 }).primaryKey(),
    purpose: varchar('purpose', { length: 20 }).$type<TokenPurpose>().notNull(),
    tokenHash: varchar('token_hash', { length: 64 }).notNull(),
    userId: varchar('user_id', { length: 24 }),
    organizationId: varchar('organization_id', { length: 24 }),
    email: varchar('email', { length: 254 }),
    /** Purpose-specific data (a pending signup's name and password hash, for example). */
    payload: jsonb('payload').$type<Record<string, unknown>>(),
    expiresAt: timestamp('expires_at', { withTimezone: true, precision: 3 }).notNull(),
    usedAt: timestamp('used_at', { withTimezone: true, precision: 3 }),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull(),
  },
  (t) => [
    uniqueIndex('one_time_tokens_hash_uq').on(t.tokenHash),
    index('one_time_tokens_expires_idx').on(t.expiresAt),
    index('one_time_tokens_user_idx').on(t.userId, t.purpose),
    // For organization erasure and export (built concurrently by migration 0022).
    index('one_time_tokens_org_idx')
      .on(t.organizationId, t.id)
      .where(sql`organization_id is not null`)
      .concurrently(),
  ],
);

export type OneTimeTokenRow = typeof oneTimeTokens.$inferSelect;
