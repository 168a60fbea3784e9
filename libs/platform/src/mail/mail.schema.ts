import { index, integer, pgTable, text, timestamp, varchar } from 'drizzle-orm/pg-core';

/**
 * Every message is written here first, in the caller's transaction, then delivered. A failed delivery stays
 * `pending` with a later `nextAttemptAt`; without SMTP the message is kept as `stored`. Bodies carry tokens, so
 * they are encrypted at rest and cleared once the message is sent.
 */
export const mailOutbox = pgTable(
  'mail_outbox',
  {
    id: varchar('id', { length: 24 }).primaryKey(),
    to: varchar('to', { length: 254 }).notNull(),
    subject: varchar('subject', { length: 300 }).notNull(),
    template: varchar('template', { length: 40 }).notNull(),
    /** Secret-box ciphertext of `{text, html}`. */
    bodyEncrypted: text('body_encrypted'),
    status: varchar('status', { length: 10 }).$type<'pending' | 'sent' | 'stored' | 'failed'>().notNull(),
    attempts: integer('attempts').notNull().default(0),
    lastError: varchar('last_error', { length: 500 }),
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true, precision: 3 }).notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull(),
    sentAt: timestamp('sent_at', { withTimezone: true, precision: 3 }),
  },
  (t) => [index('mail_outbox_due_idx').on(t.status, t.nextAttemptAt)],
);

export type MailOutboxRow = typeof mailOutbox.$inferSelect;
