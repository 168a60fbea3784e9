import { Injectable } from '@nestjs/common';
import { and, eq, gt, isNull, lt, ne, sql } from 'drizzle-orm';
import { TransactionHost } from '../../../platform/src/index.js';
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
   * Blacklists every live session of a user (except one jti, when given), in two set-based statements.
   * Returns how many sessions were revoked.
   */
  async revokeAllForUser(userId: string, now: Date, exceptJti?: string): Promise<number> {
    const except = exceptJti ? sql`and ${sessions.jti} <> ${exceptJti}` : sql``;
    await this.tx.db.execute(sql`
      insert into ${revokedTokens} (jti, user_id, expires_at, revoked_at)
      select ${sessions.jti}, ${sessions.userId}, ${sessions.expiresAt}, ${now}
      from ${sessions}
      where ${sessions.userId} = ${userId} and ${sessions.revokedAt} is null and ${sessions.expiresAt} > ${now} ${except}
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
        ),
      )
      .returning({ id: sessions.id });
    return revoked.length;
  }

  /** Drops blacklist rows whose tokens have expired on their own: they can no longer be presented. */
  async purgeExpired(now: Date): Promise<number> {
    const deleted = await this.tx.db
      .delete(revokedTokens)
      .where(lt(revokedTokens.expiresAt, now))
      .returning({ jti: revokedTokens.jti });
    return deleted.length;
  }
}
