import { boolean, index, integer, pgTable, primaryKey, timestamp, varchar } from 'drizzle-orm/pg-core';

/**
 * Legal holds on a subject (POST /subjects/:ref/hold): while one exists, the subject's traces are neither erased
 * nor purged by retention.
 */
export const subjectHolds = pgTable(
  'subject_holds',
  {
    organizationId: varchar('organization_id', { length: 24 }).notNull(),
    /** The subject reference's HMAC (subject-key.ts), as on the traces. */
    subjectHash: varchar('subject_hash', { length: 64 }).notNull(),
    createdBy: varchar('created_by', { length: 24 }),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.organizationId, t.subjectHash] })],
);

export type SubjectErasureStatus = 'running' | 'done';

/** One erasure of a subject's content (POST /subjects/:ref/erasure), run in bounded batches. */
export const subjectErasures = pgTable(
  'subject_erasures',
  {
    id: varchar('id', { length: 24 }).primaryKey(),
    organizationId: varchar('organization_id', { length: 24 }).notNull(),
    subjectHash: varchar('subject_hash', { length: 64 }).notNull(),
    status: varchar('status', { length: 10 }).$type<SubjectErasureStatus>().notNull(),
    tracesErased: integer('traces_erased').notNull().default(0),
    /** Stored events whose notes it removed, summed over every run (a resumed erasure adds to it). */
    eventsChanged: integer('events_changed').notNull().default(0),
    /** A legal hold was placed while it ran: it stopped there, and what it had erased stays erased. */
    stoppedByHold: boolean('stopped_by_hold').notNull().default(false),
    requestedBy: varchar('requested_by', { length: 24 }),
    startedAt: timestamp('started_at', { withTimezone: true, precision: 3 }).notNull(),
    finishedAt: timestamp('finished_at', { withTimezone: true, precision: 3 }),
  },
  (t) => [
    index('subject_erasures_org_subject_idx').on(t.organizationId, t.subjectHash, t.startedAt),
    index('subject_erasures_running_idx').on(t.status, t.startedAt),
  ],
);

export type SubjectErasureRow = typeof subjectErasures.$inferSelect;
