import { index, pgTable, timestamp, varchar } from 'drizzle-orm/pg-core';

/**
 * The e-mail domains that route to an organization's single sign-on (contract §3). The domain is the primary key,
 * so a domain belongs to at most one organization, whatever the replicas do at the same time.
 */
export const ssoDomains = pgTable(
  'sso_domains',
  {
    domain: varchar('domain', { length: 253 }).primaryKey(),
    organizationId: varchar('organization_id', { length: 24 }).notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull(),
  },
  (t) => [index('sso_domains_org_idx').on(t.organizationId)],
);

export type SsoDomainRow = typeof ssoDomains.$inferSelect;
