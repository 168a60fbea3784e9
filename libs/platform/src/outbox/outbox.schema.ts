import { sql } from 'drizzle-orm';
import { index, integer, jsonb, pgTable, text, timestamp, varchar } from 'drizzle-orm/pg-core';

export type OutboxStatus = 'pending' | 'sent' | 'stored' | 'failed';

/**
 * Work to do after a commit, written in the same transaction as the change that causes it: mail now, webhook
 * deliveries and stream events next. A message is `pending` until its topic's handler succeeds (`sent`), or has
 * failed too often (`failed`); `stored` messages are kept without delivery (mail without SMTP_URL). Each attempt
 * leases the row by moving `next_attempt_at` past the attempt's longest duration, so replicas never run one
 * message twice at once; a failed attempt sets it to the backoff.
 */
export const outboxMessages = pgTable(
  'outbox_messages',
  {
    /** Also the event id a receiver deduplicates on (webhook-id). */
    id: varchar('id', { length: 24 }).primaryKey(),
    topic: varchar('topic', { length: 60 }).notNull(),
    organizationId: varchar('organization_id', { length: 24 }),
    /** The message; secrets are not kept here but in `sealed`. */
    payload: jsonb('payload').$type<Record<string, unknown>>().notNull(),
    /** Secret-box ciphertext of the message's secret part (a mail body carries tokens); cleared once sent. */
    sealed: text('sealed'),
    status: varchar('status', { length: 10 }).$type<OutboxStatus>().notNull(),
    attempts: integer('attempts').notNull().default(0),
    lastError: varchar('last_error', { length: 500 }),
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true, precision: 3 }).notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull(),
    sentAt: timestamp('sent_at', { withTimezone: true, precision: 3 }),
  },
  (t) => [
    index('outbox_messages_due_idx').on(t.status, t.nextAttemptAt),
    index('outbox_messages_topic_created_idx').on(t.topic, t.createdAt),
    // For organization erasure and export (built concurrently by migration 0022); mail of no organization is
    // left out.
    index('outbox_messages_org_idx')
      .on(t.organizationId, t.id)
      .where(sql`organization_id is not null`)
      .concurrently(),
  ],
);

export type OutboxMessageRow = typeof outboxMessages.$inferSelect;
