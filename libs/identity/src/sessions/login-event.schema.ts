import { sql } from 'drizzle-orm';
import { boolean, index, pgTable, timestamp, varchar } from 'drizzle-orm/pg-core';

/** Every login attempt on a known account, successful or not, for the user's login-activity view. */
export const loginEvents = pgTable(
  'login_events',
  {
    id: varchar('id', { length: 24 }).primaryKey(),
    userId: varchar('user_id', { length: 24 }).notNull(),
    organizationId: varchar('organization_id', { length: 24 }),
    method: varchar('method', { length: 20 }).notNull(),
    success: boolean('success').notNull(),
    /** Why a failed attempt failed (wrong_password, invalid_mfa_code, deactivated …). */
    reason: varchar('reason', { length: 40 }),
    ip: varchar('ip', { length: 64 }),
    userAgent: varchar('user_agent', { length: 512 }),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull(),
  },
  (t) => [
    index('login_events_user_idx').on(t.userId, t.createdAt),
    // For organization erasure and export (built concurrently by migration 0022); attempts of no organization
    // are left out.
    index('login_events_org_idx')
      .on(t.organizationId, t.id)
      .where(sql`organization_id is not null`)
      .concurrently(),
  ],
);

export type LoginEventRow = typeof loginEvents.$inferSelect;
