import { Injectable } from '@nestjs/common';
import { and, desc, eq, gt, isNull, lt, ne, sql } from 'drizzle-orm';
import { TransactionHost } from '#platform';
import { revokedTokens, sessions, type SessionRow } from './session.schema.js';

@Injectable()
export class SessionsRepository {
  constructor(private readonly tx: TransactionHost) {}

  async insert(row: SessionRow): Promise<void> {
    await this.tx.db.insert(sessions).values(row);
  }

  async findByJti(jti: string): Promise<SessionRow | undefined> {
    const [row] = await this.tx.db.select().from(sessions).where(eq(sessions.jti, jti)).limit(1);
    return row;
  }

  /** Blacklists a jti until its natural expiry and marks its session revoked. Idempotent. */
  async revoke(jti: string, userId: string, expiresAt: Date, at: Date): Promise<void> {
    await this.tx.db
      .insert(revokedTokens)
      .values({ jti, userId, expiresAt, revokedAt: at })
      .onConflictDoNothing({ target: revokedTokens.jti });
    await this.tx.db.update(sessions).set({ revokedAt: at }).where(eq(sessions.jti, jti));
  }

  /**
   * Blacklists every live session of a user (except one jti, when given; in one organization only, when given), in
   * two set-based statements. Returns how many sessions were revoked.
   */
  async revokeAllForUser(
    userId: string,
    now: Date,
    exceptJti?: string,
    organizationId?: string,
  ): Promise<number> {
    const except = exceptJti ? sql`and ${sessions.jti} <> ${exceptJti}` : sql``;
    const inOrganization = organizationId ? sql`and ${sessions.organizationId} = ${organizationId}` : sql``;
    await this.tx.db.execute(sql`
      insert into ${revokedTokens} (jti, user_id, expires_at, revoked_at)
      select ${sessions.jti}, ${sessions.userId}, ${sessions.expiresAt}, ${now}
      from ${sessions}
      where ${sessions.userId} = ${userId} and ${sessions.revokedAt} is null and ${sessions.expiresAt} > ${now}
        ${except} ${inOrganization}
      on conflict (jti) do nothing`);
    const revoked = await this.tx.db
      .update(sessions)
      .set({ revokedAt: now })
      .where(
        and(
          eq(sessions.userId, userId),
          isNull(sessions.revokedAt),
          gt(sessions.expiresAt, now),
          exceptJti ? ne(sessions.jti, exceptJti) : undefined,
          organizationId ? eq(sessions.organizationId, organizationId) : undefined,
        ),
      )
      .returning({ id: sessions.id });
    return revoked.length;
  }

  /** The users with a session opened by SAML for this NameID in the organization (a bounded list). */
  async usersOfSamlNameId(organizationId: string, nameId: string): Promise<string[]> {
    const rows = await this.tx.db
      .selectDistinct({ userId: sessions.userId })
      .from(sessions)
      .where(and(eq(sessions.organizationId, organizationId), eq(sessions.samlNameId, nameId)))
      .limit(20);
    return rows.map((r) => r.userId);
  }

  /** The organizations with a live session opened by SAML for this NameID (a bounded list). */
  async organizationsOfSamlNameId(nameId: string, now: Date): Promise<string[]> {
    const rows = await this.tx.db
      .selectDistinct({ organizationId: sessions.organizationId })
      .from(sessions)
      .where(and(eq(sessions.samlNameId, nameId), isNull(sessions.revokedAt), gt(sessions.expiresAt, now)))
      .limit(20);
    return rows.map((r) => r.organizationId);
  }

  /** Drops blacklist rows whose tokens expired before `cutoff`. */
  async purgeExpired(cutoff: Date): Promise<number> {
    const deleted = await this.tx.db
      .delete(revokedTokens)
      .where(lt(revokedTokens.expiresAt, cutoff))
      .returning({ jti: revokedTokens.jti });
    return deleted.length;
  }

  /** Drops session rows whose tokens expired before `cutoff`. */
  async purgeSessionsExpiredBefore(cutoff: Date): Promise<number> {
    const deleted = await this.tx.db
      .delete(sessions)
      .where(lt(sessions.expiresAt, cutoff))
      .returning({ id: sessions.id });
    return deleted.length;
  }

  /**
   * Blacklists a jti and marks its session revoked, reporting whether this call did it: false when the jti was
   * already blacklisted (by an earlier or a concurrent revocation, which this insert waits for), so that a
   * token can be spent once (refresh) and a revocation is counted once.
   */
  async revokeOnce(jti: string, userId: string, expiresAt: Date, at: Date): Promise<boolean> {
    const inserted = await this.tx.db
      .insert(revokedTokens)
      .values({ jti, userId, expiresAt, revokedAt: at })
      .onConflictDoNothing({ target: revokedTokens.jti })
      .returning({ jti: revokedTokens.jti });
    if (inserted.length === 0) return false;
    await this.tx.db.update(sessions).set({ revokedAt: at }).where(eq(sessions.jti, jti));
    return true;
  }

  /** One session of a user by its id; undefined when absent or another user's. */
  async findForUser(id: string, userId: string): Promise<SessionRow | undefined> {
    const [row] = await this.tx.db
      .select()
      .from(sessions)
      .where(and(eq(sessions.id, id), eq(sessions.userId, userId)))
      .limit(1);
    return row;
  }

  /** The user's live (unrevoked, unexpired) sessions (in one organization, when given), newest first, at most `limit`. */
  async listLiveForUser(
    userId: string,
    now: Date,
    limit: number,
    organizationId?: string,
  ): Promise<SessionRow[]> {
    return this.tx.db
      .select()
      .from(sessions)
      .where(
        and(
          eq(sessions.userId, userId),
          isNull(sessions.revokedAt),
          gt(sessions.expiresAt, now),
          organizationId ? eq(sessions.organizationId, organizationId) : undefined,
        ),
      )
      .orderBy(desc(sessions.createdAt), desc(sessions.id))
      .limit(limit);
  }
}
