import { index, jsonb, pgTable, primaryKey, timestamp, uniqueIndex, varchar } from 'drizzle-orm/pg-core';

/**
 * An organization's SCIM token: one per organization (the primary key), stored as its SHA-256. A new
 * token replaces the row, so the old one stops working at once; `id` names the token in audit entries.
 * See docs/identity-administrators.md, "SCIM provisioning"; test/scim-token.e2e-spec.ts.
 */
export const scimTokens = pgTable(
  'scim_tokens',
  {
    organizationId: varchar('organization_id', { length: 24 }).primaryKey(),
    id: varchar('id', { length: 24 }).notNull(),
    tokenHash: varchar('token_hash', { length: 64 }).notNull(),
    createdBy: varchar('created_by', { length: 24 }),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull(),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true, precision: 3 }),
  },
  (t) => [uniqueIndex('scim_tokens_hash_uq').on(t.tokenHash)],
);

export type ScimTokenRow = typeof scimTokens.$inferSelect;

/**
 * What an organization's IdP said of a user over SCIM, beside the account: its own stable id (`externalId`, per
 * organization, since two organizations' IdPs know the same person by different ids) and the name parts. A member
 * without a row was not provisioned by SCIM.
 */
export const scimIdentities = pgTable(
  'scim_identities',
  {
    organizationId: varchar('organization_id', { length: 24 }).notNull(),
    userId: varchar('user_id', { length: 24 }).notNull(),
    externalId: varchar('external_id', { length: 255 }),
    givenName: varchar('given_name', { length: 200 }),
    familyName: varchar('family_name', { length: 200 }),
    /** The IdP's displayName for the member, kept for this organization only (an account may be shared). */
    displayName: varchar('display_name', { length: 200 }),
    /** The `emails` the IdP wrote, returned as written (no drift); null until it writes some. */
    emails: jsonb('emails').$type<ScimEmail[]>(),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true, precision: 3 }).notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.userId] }),
    index('scim_identities_external_idx').on(t.organizationId, t.externalId),
  ],
);

/** One entry of a SCIM user's `emails`, as the IdP wrote it. */
export interface ScimEmail {
  value: string;
  type?: string;
  primary?: boolean;
  display?: string;
}

export type ScimIdentityRow = typeof scimIdentities.$inferSelect;
