import { Injectable } from '@nestjs/common';
import { and, eq, isNull, lt, or } from 'drizzle-orm';
import { TransactionHost } from '#platform';
import { scimTokens, type ScimTokenRow } from './scim.schema.js';

@Injectable()
export class ScimTokensRepository {
  constructor(private readonly tx: TransactionHost) {}

  async find(organizationId: string): Promise<ScimTokenRow | undefined> {
    const [row] = await this.tx.db
      .select()
      .from(scimTokens)
      .where(eq(scimTokens.organizationId, organizationId))
      .limit(1);
    return row;
  }

  /** The organization's token, replaced: the old hash is gone in the same statement. */
  async replace(row: ScimTokenRow): Promise<void> {
    await this.tx.db
      .insert(scimTokens)
      .values(row)
      .onConflictDoUpdate({
        target: scimTokens.organizationId,
        set: {
          id: row.id,
          tokenHash: row.tokenHash,
          createdBy: row.createdBy,
          createdAt: row.createdAt,
          lastUsedAt: null,
        },
      });
  }

  async remove(organizationId: string): Promise<boolean> {
    const deleted = await this.tx.db
      .delete(scimTokens)
      .where(eq(scimTokens.organizationId, organizationId))
      .returning({ id: scimTokens.id });
    return deleted.length > 0;
  }

  async findByHash(tokenHash: string): Promise<ScimTokenRow | undefined> {
    const [row] = await this.tx.db
      .select()
      .from(scimTokens)
      .where(eq(scimTokens.tokenHash, tokenHash))
      .limit(1);
    return row;
  }

  /** Records a use, at most once a minute per token (a write per request would be waste). */
  async touch(organizationId: string, tokenId: string, now: Date): Promise<void> {
    await this.tx.db
      .update(scimTokens)
      .set({ lastUsedAt: now })
      .where(
        and(
          eq(scimTokens.organizationId, organizationId),
          eq(scimTokens.id, tokenId),
          or(isNull(scimTokens.lastUsedAt), lt(scimTokens.lastUsedAt, new Date(now.getTime() - 60_000))),
        ),
      );
  }
}
