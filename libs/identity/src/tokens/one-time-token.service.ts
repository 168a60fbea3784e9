import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { Clock, newId, sha256Hex } from '#platform';
import { OneTimeTokensRepository } from './one-time-tokens.repository.js';
import type { OneTimeTokenRow, TokenPurpose } from './token.schema.js';

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
    private readonly tokens: OneTimeTokensRepository,
    private readonly clock: Clock,
  ) {}

  async issue(input: IssueTokenInput): Promise<{ token: string; expiresAt: Date }> {
    const token = randomBytes(32).toString('base64url');
    const now = this.clock.now();
    const expiresAt = new Date(now.getTime() + input.ttlMs);
    await this.tokens.insert({
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
    return this.tokens.consume(purpose, sha256Hex(token), this.clock.now());
  }

  /** Invalidates a user's outstanding tokens of one purpose (a new reset link replaces the old ones). */
  async revokeOutstanding(userId: string, purpose: TokenPurpose): Promise<void> {
    await this.tokens.markOutstandingUsed(userId, purpose, this.clock.now());
  }

  /** Deletes tokens that expired more than a day ago. */
  purgeExpired(): Promise<number> {
    return this.tokens.deleteExpiredBefore(new Date(this.clock.nowMs() - 24 * 3600 * 1000));
  }
}
