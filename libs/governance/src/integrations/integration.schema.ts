import { index, jsonb, pgTable, text, timestamp, varchar } from 'drizzle-orm/pg-core';
import type { StoredRecipients } from './email-recipients.js';

export type IntegrationType = 'email' | 'slack' | 'webhook';

/**
 * A notification channel of an organization. The URL of a Slack or webhook integration is write-only:
 * stored sealed with the SecretBox, shown only as its scheme and host. A webhook integration signs what it posts
 * with its own `whsec_` secret, sealed too and shown once, at creation.
 * See docs/compliance-officers.md, "Integrations"; test/integrations.e2e-spec.ts.
 */
export const integrations = pgTable(
  'integrations',
  {
    id: varchar('id', { length: 24 }).primaryKey(),
    organizationId: varchar('organization_id', { length: 24 }).notNull(),
    type: varchar('type', { length: 10 }).$type<IntegrationType>().notNull(),
    name: varchar('name', { length: 120 }).notNull(),
    /**
     * email: the recipients, each confirmed or pending with the SHA-256 of its single-use confirmation token
     * (`StoredRecipients`). A plain list is a row written before recipients had to confirm (see `readRecipients`).
     */
    recipients: jsonb('recipients').$type<string[] | StoredRecipients>(),
    /** slack, webhook: the URL, sealed; and its scheme and host, for display. */
    urlSealed: text('url_sealed'),
    urlHost: varchar('url_host', { length: 300 }),
    /** webhook: the signing secret, sealed. */
    secretSealed: text('secret_sealed'),
    createdBy: varchar('created_by', { length: 24 }),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true, precision: 3 }).notNull(),
  },
  (t) => [index('integrations_org_created_idx').on(t.organizationId, t.createdAt, t.id)],
);

export type IntegrationRow = typeof integrations.$inferSelect;
