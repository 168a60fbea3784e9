import { sql } from 'drizzle-orm';
import {
  boolean,
  index,
  integer,
  jsonb,
  pgTable,
  text,
  timestamp,
  uniqueIndex,
  varchar,
} from 'drizzle-orm/pg-core';
import type { PiiMaskingSetting } from '#platform';

export const organizations = pgTable(
  'organizations',
  {
    id: varchar('id', { length: 24 }).primaryKey(),
    name: varchar('name', { length: 200 }).notNull(),
    plan: varchar('plan', { length: 20 })
      .$type<'sandbox' | 'scale' | 'governance' | 'enterprise' | 'custom'>()
      .notNull(),
    emailDomains: text('email_domains')
      .array()
      .notNull()
      .default(sql`'{}'::text[]`),
    ssoConfig: jsonb('sso_config').$type<Record<string, unknown> | null>(),
    roleMappingRules: jsonb('role_mapping_rules')
      .$type<{ pattern: string; role: string }[]>()
      .notNull()
      .default(sql`'[]'::jsonb`),
    /**
     * Traces older than this many days are purged daily; null keeps them (at least 183: docs/compliance-officers.md,
     * "Trace purge and retention").
     */
    traceRetentionDays: integer('trace_retention_days'),
    /**
     * Whom a person contests a decision with (GET /traces/:id/explanation, the subject report): free text such as
     * an address or a URL, set by PATCH /organizations/current.
     */
    contestContact: varchar('contest_contact', { length: 500 }),
    /**
     * Masking of personal data in trace content at ingestion (PATCH /organizations/current `piiMasking`): the PII
     * types to mask and how. null: masking off. Applies to traces stored after the change.
     */
    piiMasking: jsonb('pii_masking').$type<PiiMaskingSetting>(),
    complianceNotes: jsonb('compliance_notes')
      .$type<Record<string, string>>()
      .notNull()
      .default(sql`'{}'::jsonb`),
    /**
     * Set by `DELETE /organizations/current`: from then on no membership, key or token of the
     * organization is accepted; `org:restore` clears both columns before `eraseAfter`, the erasure job removes every
     * row of the organization after it.
     * See docs/compliance-officers.md, "Organization deletion"; test/organization-deletion.e2e-spec.ts.
     */
    deletedAt: timestamp('deleted_at', { withTimezone: true, precision: 3 }),
    eraseAfter: timestamp('erase_after', { withTimezone: true, precision: 3 }),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true, precision: 3 }).notNull(),
  },
  (t) => [
    index('organizations_erase_after_idx')
      .on(t.eraseAfter)
      .where(sql`erase_after is not null`),
  ],
);

/** One row per (organization, user): the role and whether the membership is active. */
export const memberships = pgTable(
  'memberships',
  {
    id: varchar('id', { length: 24 }).primaryKey(),
    organizationId: varchar('organization_id', { length: 24 })
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    userId: varchar('user_id', { length: 24 }).notNull(),
    role: varchar('role', { length: 10 }).$type<'owner' | 'admin' | 'member' | 'viewer'>().notNull(),
    isActive: boolean('is_active').notNull().default(true),
    /**
     * `scim` when an identity provider deactivated the membership over SCIM: sign-in is refused as for a
     * suspension, but sessions already open stay valid until they expire or are revoked, where a suspension ends
     * them at once (docs/identity-administrators.md, "SCIM provisioning"; test/scim-users-update.e2e-spec.ts).
     */
    deactivatedBy: varchar('deactivated_by', { length: 8 }).$type<'scim'>(),
    /** The last sign-in into this organization: what its member list shows (never another organization's). */
    lastLoginAt: timestamp('last_login_at', { withTimezone: true, precision: 3 }),
    lastLoginIp: varchar('last_login_ip', { length: 64 }),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true, precision: 3 }).notNull(),
  },
  (t) => [
    uniqueIndex('memberships_org_user_uq').on(t.organizationId, t.userId),
    index('memberships_user_idx').on(t.userId),
  ],
);

export type OrganizationRow = typeof organizations.$inferSelect;
export type MembershipRow = typeof memberships.$inferSelect;
