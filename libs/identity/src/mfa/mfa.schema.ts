import { index, pgTable, timestamp, varchar } from 'drizzle-orm/pg-core';

/** Backup codes: ten per user, stored hashed, each usable once; a new set replaces the old one. */
export const mfaBackupCodes = pgTable(
  'mfa_backup_codes',
  {
    id: varchar('id', { length: 24 }).primaryKey(),
    userId: varchar('user_id', { length: 24 }).notNull(),
    codeHash: varchar('code_hash', { length: 64 }).notNull(),
    usedAt: timestamp('used_at', { withTimezone: true, precision: 3 }),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull(),
  },
  (t) => [index('mfa_backup_codes_user_idx').on(t.userId)],
);
