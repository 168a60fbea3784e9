import { sql } from 'drizzle-orm';
import { index, jsonb, pgTable, timestamp, varchar } from 'drizzle-orm/pg-core';

/**
 * The organization's domain events (trace.flagged, review.completed, ...), written in the transaction of the change
 * that causes them. Webhook deliveries and the event stream are made from them; the stream replays them after a
 * reconnect. Pruned after EVENT_RETENTION_DAYS.
 */
export const domainEvents = pgTable(
  'domain_events',
  {
    /** The event id: `webhook-id` of every delivery of the event, and the stream's event id. */
    id: varchar('id', { length: 24 }).primaryKey(),
    organizationId: varchar('organization_id', { length: 24 }).notNull(),
    type: varchar('type', { length: 60 }).notNull(),
    /** The agent the event concerns, if any (webhooks' `filterAgentId`). */
    agentId: varchar('agent_id', { length: 24 }),
    data: jsonb('data').$type<Record<string, unknown>>().notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull(),
  },
  // The purge walks the primary key: ids start with their creation time in seconds.
  (t) => [
    index('domain_events_org_created_idx').on(t.organizationId, t.createdAt, t.id),
    // A subject's erasure finds the events about its traces (built concurrently by migration 0028).
    index('domain_events_org_trace_idx')
      .on(t.organizationId, sql`(${t.data}->>'traceId')`)
      .concurrently(),
  ],
);

export type DomainEventRow = typeof domainEvents.$inferSelect;
