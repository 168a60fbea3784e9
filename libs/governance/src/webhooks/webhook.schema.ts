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

/**
 * A receiver of the organization's events, signed per Standard Webhooks (docs/dashboard-developers.md,
 * "Review, approval patterns, webhooks and the event stream").
 */
export const webhooks = pgTable(
  'webhooks',
  {
    id: varchar('id', { length: 24 }).primaryKey(),
    organizationId: varchar('organization_id', { length: 24 }).notNull(),
    url: varchar('url', { length: 2048 }).notNull(),
    events: jsonb('events')
      .$type<string[]>()
      .notNull()
      .default(sql`'[]'::jsonb`),
    filterAgentId: varchar('filter_agent_id', { length: 24 }),
    description: varchar('description', { length: 500 }),
    isActive: boolean('is_active').notNull().default(true),
    disabledReason: varchar('disabled_reason', { length: 200 }),
    /** The signing secret (`whsec_...`), sealed with the secret box; shown once at creation and rotation. */
    secretSealed: text('secret_sealed').notNull(),
    /** The secret before the last rotation, still signing until `previousSecretExpiresAt` (the grace period). */
    previousSecretSealed: text('previous_secret_sealed'),
    previousSecretExpiresAt: timestamp('previous_secret_expires_at', { withTimezone: true, precision: 3 }),
    createdBy: varchar('created_by', { length: 24 }),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true, precision: 3 }).notNull(),
  },
  (t) => [index('webhooks_org_created_idx').on(t.organizationId, t.createdAt)],
);

export type WebhookRow = typeof webhooks.$inferSelect;

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

/**
 * One event for one webhook, and its attempts. Created by the events' fan-out (once per webhook and event: the
 * unique index makes a repeated fan-out a no-op), by a test send, or by a redelivery (`redeliveryOf`). Its attempts
 * run as outbox messages of the topic `webhook.deliver`.
 */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: varchar('id', { length: 24 }).primaryKey(),
    organizationId: varchar('organization_id', { length: 24 }).notNull(),
    webhookId: varchar('webhook_id', { length: 24 }).notNull(),
    eventId: varchar('event_id', { length: 24 }).notNull(),
    eventType: varchar('event_type', { length: 60 }).notNull(),
    status: varchar('status', { length: 10 }).$type<DeliveryStatus>().notNull(),
    attempts: integer('attempts').notNull().default(0),
    responseStatus: integer('response_status'),
    /** The receiver's answer, cut to 1 KiB. */
    responseBody: varchar('response_body', { length: 1024 }),
    error: varchar('error', { length: 500 }),
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true, precision: 3 }),
    redeliveryOf: varchar('redelivery_of', { length: 24 }),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull(),
    completedAt: timestamp('completed_at', { withTimezone: true, precision: 3 }),
  },
  (t) => [
    uniqueIndex('webhook_deliveries_webhook_event_uq')
      .on(t.webhookId, t.eventId)
      .where(sql`${t.redeliveryOf} is null`),
    index('webhook_deliveries_webhook_created_idx').on(t.organizationId, t.webhookId, t.createdAt),
    index('webhook_deliveries_created_idx').on(t.createdAt),
    // A subject's erasure clears the answers to the events it changed (built concurrently by migration 0028).
    index('webhook_deliveries_org_event_idx').on(t.organizationId, t.eventId).concurrently(),
  ],
);

export type WebhookDeliveryRow = typeof webhookDeliveries.$inferSelect;
