import { Injectable } from '@nestjs/common';
import { and, eq, gt, isNull, lt } from 'drizzle-orm';
import { TransactionHost } from '#platform';
import { oneTimeTokens, type OneTimeTokenRow, type TokenPurpose } from './token.schema.js';

/**
 * `one_time_tokens`, found by the SHA-256 of the token. Most tokens belong to no organization (a signup, a reset),
 * so the queries are by hash and by user.
 */
@Injectable()
export class OneTimeTokensRepository {
  constructor(private readonly tx: TransactionHost) {}

  async insert(row: Omit<OneTimeTokenRow, 'usedAt'>): Promise<void> {
    await this.tx.db.insert(oneTimeTokens).values(row);
  }

  /**
   * Marks the token of this hash and purpose used, if it is unused and unexpired at `now`, and returns it: one
   * conditional UPDATE, so that of two racing requests one gets it.
   */
  async consume(purpose: TokenPurpose, tokenHash: string, now: Date): Promise<OneTimeTokenRow | undefined> {
    const [row] = await this.tx.db
      .update(oneTimeTokens)
      .set({ usedAt: now })
      .where(
        and(
          eq(oneTimeTokens.tokenHash, tokenHash),
          eq(oneTimeTokens.purpose, purpose),
          isNull(oneTimeTokens.usedAt),
          gt(oneTimeTokens.expiresAt, now),
        ),
      )
      .returning();
    return row;
  }

  /** Marks the user's unused tokens of one purpose used at `now`. */
  async markOutstandingUsed(userId: string, purpose: TokenPurpose, now: Date): Promise<void> {
    await this.tx.db
      .update(oneTimeTokens)
      .set({ usedAt: now })
      .where(
        and(
          eq(oneTimeTokens.userId, userId),
          eq(oneTimeTokens.purpose, purpose),
          isNull(oneTimeTokens.usedAt),
        ),
      );
  }

  /** Deletes the tokens that expired before `cutoff`; how many. */
  async deleteExpiredBefore(cutoff: Date): Promise<number> {
    const deleted = await this.tx.db
      .delete(oneTimeTokens)
      .where(lt(oneTimeTokens.expiresAt, cutoff))
      .returning({ id: oneTimeTokens.id });
    return deleted.length;
  }
}
