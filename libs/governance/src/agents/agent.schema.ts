import { index, pgTable, timestamp, varchar } from 'drizzle-orm/pg-core';

/** An AI agent whose decisions are sent as traces; its key lives in api_keys (kind 'agent'). */
export const agents = pgTable(
  'agents',
  {
    id: varchar('id', { length: 24 }).primaryKey(),
    organizationId: varchar('organization_id', { length: 24 }).notNull(),
    name: varchar('name', { length: 200 }).notNull(),
    description: varchar('description', { length: 2000 }),
    createdBy: varchar('created_by', { length: 24 }),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true, precision: 3 }).notNull(),
  },
  (t) => [index('agents_org_created_idx').on(t.organizationId, t.createdAt)],
);

export type AgentRow = typeof agents.$inferSelect;
