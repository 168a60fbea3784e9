import { sql } from 'drizzle-orm';
import { boolean, index, integer, jsonb, pgTable, timestamp, varchar } from 'drizzle-orm/pg-core';

export type ReportFrequency = 'daily' | 'weekly' | 'monthly';

/**
 * A digest e-mailed on a schedule. The scheduler claims a due report by setting `claimedUntil`
 * (a lease, so a replica that dies mid-send does not hold it for ever) and, after a successful send, moves
 * `nextSendAt` on and clears the claim in one statement.
 * See docs/compliance-officers.md, "Scheduled reports".
 */
export const scheduledReports = pgTable(
  'scheduled_reports',
  {
    id: varchar('id', { length: 24 }).primaryKey(),
    organizationId: varchar('organization_id', { length: 24 }).notNull(),
    workspaceId: varchar('workspace_id', { length: 24 }),
    name: varchar('name', { length: 120 }).notNull(),
    frequency: varchar('frequency', { length: 10 }).$type<ReportFrequency>().notNull(),
    recipients: jsonb('recipients').$type<string[]>().notNull(),
    includeMetrics: boolean('include_metrics').notNull(),
    includeTopAgents: boolean('include_top_agents').notNull(),
    includeAlerts: boolean('include_alerts').notNull(),
    includeLowConf: boolean('include_low_conf').notNull(),
    isActive: boolean('is_active').notNull(),
    lastSentAt: timestamp('last_sent_at', { withTimezone: true, precision: 3 }),
    nextSendAt: timestamp('next_send_at', { withTimezone: true, precision: 3 }).notNull(),
    sentCount: integer('sent_count').notNull().default(0),
    claimedUntil: timestamp('claimed_until', { withTimezone: true, precision: 3 }),
    createdBy: varchar('created_by', { length: 24 }),
    createdByEmail: varchar('created_by_email', { length: 320 }),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true, precision: 3 }).notNull(),
  },
  (t) => [
    index('scheduled_reports_org_created_idx').on(t.organizationId, t.createdAt, t.id),
    // The scheduler's scan: active reports by due time, across organizations.
    index('scheduled_reports_due_idx')
      .on(t.nextSendAt)
      .where(sql`is_active`),
  ],
);

export type ScheduledReportRow = typeof scheduledReports.$inferSelect;
