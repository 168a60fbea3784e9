import { Injectable } from '@nestjs/common';
import { and, eq, isNull, lt, or, sql } from 'drizzle-orm';
import { TransactionHost } from '#platform';
import { users, type UserRow } from './user.schema.js';

/** The columns a user changes about themselves. */
export type UserSelfPatch = Partial<
  Pick<UserRow, 'name' | 'locale' | 'timezone' | 'sessionTimeout' | 'preferences'>
>;

@Injectable()
export class UsersRepository {
  constructor(private readonly tx: TransactionHost) {}

  async findByEmail(email: string): Promise<UserRow | undefined> {
    const [row] = await this.tx.db.select().from(users).where(eq(users.email, email)).limit(1);
    return row;
  }

  async findById(id: string): Promise<UserRow | undefined> {
    const [row] = await this.tx.db.select().from(users).where(eq(users.id, id)).limit(1);
    return row;
  }

  /** Inserts unless the e-mail is taken; returns undefined on that conflict (no exception, no aborted transaction). */
  async insertIfEmailFree(row: typeof users.$inferInsert): Promise<UserRow | undefined> {
    const [inserted] = await this.tx.db
      .insert(users)
      .values(row)
      .onConflictDoNothing({ target: users.email })
      .returning();
    return inserted;
  }

  /**
   * Changes the account's e-mail unless another account has it: false on that conflict. A concurrent insert of
   * the same address can still fail the unique index (code 23505), which the caller turns into a conflict.
   */
  async changeEmailIfFree(id: string, email: string, at: Date): Promise<boolean> {
    const rows = await this.tx.db
      .update(users)
      // A new address is unproven until its mailbox answers (an invitation to it then resets the account).
      .set({ email, emailVerifiedAt: null, emailVerifiedVia: null, updatedAt: at })
      .where(
        and(
          eq(users.id, id),
          sql`not exists (select 1 from ${users} as other where other.email = ${email} and other.id <> ${id})`,
        ),
      )
      .returning({ id: users.id });
    return rows.length === 1;
  }

  /**
   * The first proof of an account's mailbox claims the account for the mailbox's holder: whoever
   * made it before the proof keeps no way in. Its password is the one the proof came with (an invitation's or a
   * reset's), or none (a magic link, a provider's verified address); its link to a social identity and its IdP's
   * ownership go. An invitation's claim also sets the name and drops the TOTP (it "resets the credentials"); a
   * reset, a magic link or a provider keeps the TOTP, since they never lift a second factor. The caller revokes the
   * sessions. Undefined when the address was proven meanwhile.
   * See docs/security.md, "Accounts and organizations that cannot be taken over";
   * test/invitation-takeover-*.e2e-spec.ts, test/email-flows.e2e-spec.ts.
   */
  async claimUnproven(
    id: string,
    claim:
      | { via: 'invitation'; name: string; passwordHash: string }
      | { via: 'password_reset'; passwordHash: string }
      | { via: 'magic_link' | 'oauth' },
    at: Date,
  ): Promise<UserRow | undefined> {
    const invitation =
      claim.via === 'invitation'
        ? {
            name: claim.name,
            mfaEnabled: false,
            mfaSecretEncrypted: null,
            mfaLastStep: null,
            mfaEnabledAt: null,
          }
        : {};
    const [row] = await this.tx.db
      .update(users)
      .set({
        ...invitation,
        passwordHash: 'passwordHash' in claim ? claim.passwordHash : null,
        passwordChangedAt: at,
        ssoId: null,
        originOrganizationId: null,
        emailVerifiedAt: at,
        emailVerifiedVia: claim.via,
        updatedAt: at,
      })
      .where(and(eq(users.id, id), isNull(users.emailVerifiedAt)))
      .returning();
    return row;
  }

  async recordLogin(id: string, ip: string | null, at: Date): Promise<void> {
    await this.tx.db.update(users).set({ lastLoginIp: ip, lastLoginAt: at }).where(eq(users.id, id));
  }

  async updatePassword(id: string, passwordHash: string, at: Date): Promise<void> {
    await this.tx.db
      .update(users)
      .set({ passwordHash, passwordChangedAt: at, updatedAt: at })
      .where(eq(users.id, id));
  }

  /**
   * Stores a pending TOTP secret (mfa/setup) unless MFA is already on; resets the replay guard, which belongs to
   * the previous secret. Returns false when MFA was enabled meanwhile.
   */
  async setPendingMfaSecret(id: string, secretEncrypted: string, at: Date): Promise<boolean> {
    const rows = await this.tx.db
      .update(users)
      .set({ mfaSecretEncrypted: secretEncrypted, mfaLastStep: null, updatedAt: at })
      .where(and(eq(users.id, id), eq(users.mfaEnabled, false)))
      .returning({ id: users.id });
    return rows.length === 1;
  }

  /**
   * Activates MFA with the pending secret the caller verified the code against, recording the code's step.
   * Conditional, so a concurrent setup (another secret) or enable makes it return undefined.
   */
  async enableMfa(id: string, secretEncrypted: string, step: number, at: Date): Promise<UserRow | undefined> {
    const [row] = await this.tx.db
      .update(users)
      .set({ mfaEnabled: true, mfaEnabledAt: at, mfaLastStep: step, updatedAt: at })
      .where(
        and(
          eq(users.id, id),
          eq(users.mfaEnabled, false),
          eq(users.mfaSecretEncrypted, secretEncrypted),
          or(isNull(users.mfaLastStep), lt(users.mfaLastStep, step)),
        ),
      )
      .returning();
    return row;
  }

  /**
   * Accepts a TOTP step for a user with MFA on: one conditional update, so a code is accepted at most once in
   * its step even under concurrent requests. False when the step (or a later one) was already used.
   */
  async acceptMfaStep(id: string, step: number): Promise<boolean> {
    const rows = await this.tx.db
      .update(users)
      .set({ mfaLastStep: step })
      .where(
        and(
          eq(users.id, id),
          eq(users.mfaEnabled, true),
          or(isNull(users.mfaLastStep), lt(users.mfaLastStep, step)),
        ),
      )
      .returning({ id: users.id });
    return rows.length === 1;
  }

  /** Turns MFA off and forgets the secret and its replay guard. */
  async disableMfa(id: string, at: Date): Promise<void> {
    await this.tx.db
      .update(users)
      .set({
        mfaEnabled: false,
        mfaSecretEncrypted: null,
        mfaLastStep: null,
        mfaEnabledAt: null,
        updatedAt: at,
      })
      .where(eq(users.id, id));
  }

  /** Reads the user and locks the row until the transaction ends (read-modify-write of preferences). */
  async findByIdForUpdate(id: string): Promise<UserRow | undefined> {
    const [row] = await this.tx.db.select().from(users).where(eq(users.id, id)).limit(1).for('update');
    return row;
  }

  async updateSelf(id: string, patch: UserSelfPatch, at: Date): Promise<UserRow | undefined> {
    const [row] = await this.tx.db
      .update(users)
      .set({ ...patch, updatedAt: at })
      .where(eq(users.id, id))
      .returning();
    return row;
  }
}
