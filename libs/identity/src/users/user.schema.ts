import { sql } from 'drizzle-orm';
import { bigint, boolean, jsonb, pgTable, text, timestamp, uniqueIndex, varchar } from 'drizzle-orm/pg-core';
import type { SessionTimeout } from './session-timeout.js';

/** How an account's address was proven (`users.emailVerifiedVia`). */
export type EmailProof = 'signup' | 'magic_link' | 'password_reset' | 'invitation' | 'oauth';

export const users = pgTable(
  'users',
  {
    id: varchar('id', { length: 24 }).primaryKey(),
    /** Stored lower-cased and trimmed. */
    email: varchar('email', { length: 254 }).notNull(),
    name: varchar('name', { length: 200 }).notNull(),
    passwordHash: varchar('password_hash', { length: 255 }),
    locale: varchar('locale', { length: 35 }).notNull().default('en'),
    timezone: varchar('timezone', { length: 64 }).notNull().default('UTC'),
    isActive: boolean('is_active').notNull().default(true),
    mfaEnabled: boolean('mfa_enabled').notNull().default(false),
    /** TOTP secret, encrypted with the secret box; set by mfa/setup, active once mfaEnabled. */
    mfaSecretEncrypted: text('mfa_secret_encrypted'),
    /** The last TOTP time step accepted: a code is refused a second time in its step. */
    mfaLastStep: bigint('mfa_last_step', { mode: 'number' }),
    mfaEnabledAt: timestamp('mfa_enabled_at', { withTimezone: true, precision: 3 }),
    ssoId: varchar('sso_id', { length: 255 }),
    /**
     * When the address was proven to belong to the account's holder, and how (`EmailProof`); null while it never
     * was (a plain registration, an account an identity provider or SCIM created, a Microsoft social sign-up). An
     * invitation into an unproven account treats its token as the proof and resets the account's credentials.
     */
    emailVerifiedAt: timestamp('email_verified_at', { withTimezone: true, precision: 3 }),
    emailVerifiedVia: varchar('email_verified_via', { length: 20 }).$type<EmailProof>(),
    /**
     * The organization whose SSO or SCIM created the account, while it is that organization's to manage: its SSO
     * sessions may change account-wide settings and sign the account in without its own second factor. Cleared
     * when the holder of the mailbox claims the account through another organization's invitation.
     */
    originOrganizationId: varchar('origin_organization_id', { length: 24 }),
    lastLoginIp: varchar('last_login_ip', { length: 64 }),
    lastLoginAt: timestamp('last_login_at', { withTimezone: true, precision: 3 }),
    sessionTimeout: varchar('session_timeout', { length: 4 }).$type<SessionTimeout>().notNull().default('7d'),
    passwordChangedAt: timestamp('password_changed_at', { withTimezone: true, precision: 3 }),
    preferences: jsonb('preferences')
      .$type<Record<string, unknown>>()
      .notNull()
      .default(sql`'{}'::jsonb`),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true, precision: 3 }).notNull(),
  },
  (t) => [uniqueIndex('users_email_uq').on(t.email)],
);

export type UserRow = typeof users.$inferSelect;
