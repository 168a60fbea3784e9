import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { and, eq, gt, isNull, lt } from 'drizzle-orm';
import { Clock, newId, sha256Hex, TransactionHost } from '#platform';
import { oneTimeTokens, type OneTimeTokenRow, type TokenPurpose } from './token.schema.js';

export interface IssueTokenInput {
  purpose: TokenPurpose;
  ttlMs: number;
  userId?: string | null;
  organizationId?: string | null;
  email?: string | null;
  payload?: Record<string, unknown> | null;
}

/**
 * Random single-use tokens (256 bits, base64url). The plaintext leaves the service once (in an e-mail or a
 * response); the table keeps its SHA-256. Consumption is one conditional UPDATE, so a token is accepted at most
 * once even when two requests race.
 */
@Injectable()
export class OneTimeTokenService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly clock: Clock,
  ) {}

  async issue(input: IssueTokenInput): Promise<{ token: string; expiresAt: Date }> {
    const token = randomBytes(32).toString('base64url');
    const now = this.clock.now();
    const expiresAt = new Date(now.getTime() + input.ttlMs);
    await this.tx.db.insert(oneTimeTokens).values({
      id: newId(now.getTime()),
      purpose: input.purpose,
      tokenHash: sha256Hex(token),
      userId: input.userId ?? null,
      organizationId: input.organizationId ?? null,
      email: input.email ?? null,
      payload: input.payload ?? null,
      expiresAt,
      createdAt: now,
    });
    return { token, expiresAt };
  }

  /** Marks the token used and returns it, or undefined when it is unknown, used, expired or of another purpose. */
  async consume(purpose: TokenPurpose, token: string): Promise<OneTimeTokenRow | undefined> {
    if (typeof token !== 'string' || token.length < 20 || token.length > 200) return undefined;
    const now = this.clock.now();
    const [row] = await this.tx.db
      .update(oneTimeTokens)
      .set({ usedAt: now })
      .where(
        and(
          eq(oneTimeTokens.tokenHash, sha256Hex(token)),
          eq(oneTimeTokens.purpose, purpose),
          isNull(oneTimeTokens.usedAt),
          gt(oneTimeTokens.expiresAt, now),
        ),
      )
      .returning();
    return row;
  }

  /** Invalidates a user's outstanding tokens of one purpose (a new reset link replaces the old ones). */
  async revokeOutstanding(userId: string, purpose: TokenPurpose): Promise<void> {
    await this.tx.db
      .update(oneTimeTokens)
      .set({ usedAt: this.clock.now() })
      .where(
        and(
          eq(oneTimeTokens.userId, userId),
          eq(oneTimeTokens.purpose, purpose),
          isNull(oneTimeTokens.usedAt),
        ),
      );
  }

  /** Deletes tokens that expired more than a day ago. */
  async purgeExpired(): Promise<number> {
    const cutoff = new Date(this.clock.nowMs() - 24 * 3600 * 1000);
    const deleted = await this.tx.db
      .delete(oneTimeTokens)
      .where(lt(oneTimeTokens.expiresAt, cutoff))
      .returning({ id: oneTimeTokens.id });
    return deleted.length;
  }
}
