import { sql } from 'drizzle-orm';
import {
  boolean,
  doublePrecision,
  index,
  integer,
  jsonb,
  pgTable,
  timestamp,
  varchar,
} from 'drizzle-orm/pg-core';

export type AlertMetric =
  | 'block_rate'
  | 'flag_rate'
  | 'low_confidence_rate'
  | 'trace_volume'
  | 'review_backlog'
  | 'overdue_incidents';
export type AlertComparison = 'gt' | 'lt';
export type AlertState = 'ok' | 'firing';

/**
 * An alert rule. The evaluator claims due rules by moving `nextEvaluationAt` on (with
 * `FOR UPDATE SKIP LOCKED`, so replicas share the work), and changes `state` only with a conditional update from
 * the state it read, in the transaction that writes the transition, its audit entry, its event and its
 * notifications: a transition happens, and notifies, once whatever the number of replicas.
 * See docs/compliance-officers.md, "Alerts"; test/alerts-*.e2e-spec.ts.
 */
export const alertRules = pgTable(
  'alert_rules',
  {
    id: varchar('id', { length: 24 }).primaryKey(),
    organizationId: varchar('organization_id', { length: 24 }).notNull(),
    name: varchar('name', { length: 120 }).notNull(),
    metric: varchar('metric', { length: 24 }).$type<AlertMetric>().notNull(),
    agentId: varchar('agent_id', { length: 24 }),
    comparison: varchar('comparison', { length: 2 }).$type<AlertComparison>().notNull(),
    threshold: doublePrecision('threshold').notNull(),
    windowMinutes: integer('window_minutes').notNull(),
    integrationIds: jsonb('integration_ids').$type<string[]>().notNull(),
    isActive: boolean('is_active').notNull(),
    state: varchar('state', { length: 8 }).$type<AlertState>().notNull(),
    lastTriggeredAt: timestamp('last_triggered_at', { withTimezone: true, precision: 3 }),
    lastEvaluatedAt: timestamp('last_evaluated_at', { withTimezone: true, precision: 3 }),
    /** The metric's value at the last evaluation (null: no trace in the window for a rate). */
    lastValue: doublePrecision('last_value'),
    nextEvaluationAt: timestamp('next_evaluation_at', { withTimezone: true, precision: 3 }).notNull(),
    createdBy: varchar('created_by', { length: 24 }),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true, precision: 3 }).notNull(),
  },
  (t) => [
    index('alert_rules_org_created_idx').on(t.organizationId, t.createdAt, t.id),
    // The evaluator's scan: active rules by due time, across organizations.
    index('alert_rules_due_idx')
      .on(t.nextEvaluationAt)
      .where(sql`is_active`),
  ],
);

export type AlertRuleRow = typeof alertRules.$inferSelect;

/** One ok ↔ firing change of a rule, with what was measured (`GET /alerts/:id/history`, the digest). */
export const alertTransitions = pgTable(
  'alert_transitions',
  {
    id: varchar('id', { length: 24 }).primaryKey(),
    organizationId: varchar('organization_id', { length: 24 }).notNull(),
    alertId: varchar('alert_id', { length: 24 }).notNull(),
    /** The rule's name when it changed. */
    alertName: varchar('alert_name', { length: 120 }).notNull(),
    fromState: varchar('from_state', { length: 8 }).$type<AlertState>().notNull(),
    toState: varchar('to_state', { length: 8 }).$type<AlertState>().notNull(),
    metric: varchar('metric', { length: 24 }).$type<AlertMetric>().notNull(),
    agentId: varchar('agent_id', { length: 24 }),
    comparison: varchar('comparison', { length: 2 }).$type<AlertComparison>().notNull(),
    threshold: doublePrecision('threshold').notNull(),
    windowMinutes: integer('window_minutes').notNull(),
    value: doublePrecision('value').notNull(),
    /** How many integrations were notified (outbox messages written with it). */
    notified: integer('notified').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull(),
  },
  (t) => [
    index('alert_transitions_alert_idx').on(t.organizationId, t.alertId, t.createdAt, t.id),
    index('alert_transitions_org_created_idx').on(t.organizationId, t.createdAt),
  ],
);

export type AlertTransitionRow = typeof alertTransitions.$inferSelect;
