import { sql } from 'drizzle-orm';
import { index, pgTable, text, timestamp, varchar } from 'drizzle-orm/pg-core';

export type IncidentCategory = 'death' | 'widespread_infringement' | 'critical_infrastructure' | 'other';
export type IncidentStatus = 'open' | 'reported' | 'closed';

/**
 * A serious incident (EU AI Act article 73) and its reporting clock: the deadline is fixed at creation from the
 * category and the time the organization became aware of it.
 */
export const incidents = pgTable(
  'incidents',
  {
    id: varchar('id', { length: 24 }).primaryKey(),
    organizationId: varchar('organization_id', { length: 24 }).notNull(),
    title: varchar('title', { length: 200 }).notNull(),
    description: text('description'),
    category: varchar('category', { length: 32 }).$type<IncidentCategory>().notNull(),
    agentId: varchar('agent_id', { length: 24 }),
    traceId: varchar('trace_id', { length: 24 }),
    awareAt: timestamp('aware_at', { withTimezone: true, precision: 3 }).notNull(),
    deadlineAt: timestamp('deadline_at', { withTimezone: true, precision: 3 }).notNull(),
    status: varchar('status', { length: 10 }).$type<IncidentStatus>().notNull(),
    reportedAt: timestamp('reported_at', { withTimezone: true, precision: 3 }),
    closedAt: timestamp('closed_at', { withTimezone: true, precision: 3 }),
    /** When the owners and admins were told the deadline is 24 hours away, and that it has passed (once each). */
    dueSoonNoticeAt: timestamp('due_soon_notice_at', { withTimezone: true, precision: 3 }),
    overdueNoticeAt: timestamp('overdue_notice_at', { withTimezone: true, precision: 3 }),
    createdBy: varchar('created_by', { length: 24 }),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true, precision: 3 }).notNull(),
  },
  (t) => [
    // Ascending, read backwards by `order by created_at desc, id desc` (see traces_org_created_idx).
    index('incidents_org_created_idx').on(t.organizationId, t.createdAt, t.id),
    // The open ones by deadline: the overdue filter, the report's incident clock and the notices.
    index('incidents_org_status_deadline_idx').on(t.organizationId, t.status, t.deadlineAt),
    // The notice job's scan across organizations: open incidents by deadline.
    index('incidents_open_deadline_idx')
      .on(t.deadlineAt)
      .where(sql`status = 'open'`),
  ],
);

export type IncidentRow = typeof incidents.$inferSelect;
