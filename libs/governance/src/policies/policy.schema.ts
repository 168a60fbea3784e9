import { sql } from 'drizzle-orm';
import { boolean, index, integer, jsonb, pgTable, text, timestamp, varchar } from 'drizzle-orm/pg-core';
import type { PolicyCondition } from './engine/condition.js';

export const policies = pgTable(
  'policies',
  {
    id: varchar('id', { length: 24 }).primaryKey(),
    organizationId: varchar('organization_id', { length: 24 }).notNull(),
    name: varchar('name', { length: 200 }).notNull(),
    description: varchar('description', { length: 2000 }),
    outcome: varchar('outcome', { length: 10 }).$type<'block' | 'flag'>().notNull(),
    conditions: jsonb('conditions').$type<PolicyCondition[]>().notNull(),
    match: varchar('match', { length: 3 }).$type<'all' | 'any'>().notNull().default('all'),
    agentIds: text('agent_ids')
      .array()
      .notNull()
      .default(sql`'{}'::text[]`),
    priority: integer('priority').notNull().default(100),
    isActive: boolean('is_active').notNull().default(true),
    templateId: varchar('template_id', { length: 64 }),
    createdBy: varchar('created_by', { length: 24 }),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true, precision: 3 }).notNull(),
  },
  (t) => [index('policies_org_active_idx').on(t.organizationId, t.isActive)],
);

export type PolicyRow = typeof policies.$inferSelect;
