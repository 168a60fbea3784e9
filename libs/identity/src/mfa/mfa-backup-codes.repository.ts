import { Injectable } from '@nestjs/common';
import { and, count, eq, isNull } from 'drizzle-orm';
import { newId, TransactionHost } from '#platform';
import { mfaBackupCodes } from './mfa.schema.js';

/** A user's backup codes (hashed). Codes belong to the user, not to an organization. */
@Injectable()
export class MfaBackupCodesRepository {
  constructor(private readonly tx: TransactionHost) {}

  /** Deletes the user's codes, used or not, and stores the new set. Call inside a transaction. */
  async replaceAll(userId: string, codeHashes: string[], at: Date): Promise<void> {
    await this.deleteAll(userId);
    await this.tx.db.insert(mfaBackupCodes).values(
      codeHashes.map((codeHash) => ({
        id: newId(at.getTime()),
        userId,
        codeHash,
        usedAt: null,
        createdAt: at,
      })),
    );
  }

  /**
   * Marks an unused code as used with one conditional update, so a code works once even under concurrent
   * requests. The match is on the SHA-256 of the code, so no timing of the comparison reveals the code.
   */
  async consume(userId: string, codeHash: string, at: Date): Promise<boolean> {
    const rows = await this.tx.db
      .update(mfaBackupCodes)
      .set({ usedAt: at })
      .where(
        and(
          eq(mfaBackupCodes.userId, userId),
          eq(mfaBackupCodes.codeHash, codeHash),
          isNull(mfaBackupCodes.usedAt),
        ),
      )
      .returning({ id: mfaBackupCodes.id });
    return rows.length > 0;
  }

  async countUnused(userId: string): Promise<number> {
    const [row] = await this.tx.db
      .select({ n: count() })
      .from(mfaBackupCodes)
      .where(and(eq(mfaBackupCodes.userId, userId), isNull(mfaBackupCodes.usedAt)));
    return row?.n ?? 0;
  }

  async deleteAll(userId: string): Promise<void> {
    await this.tx.db.delete(mfaBackupCodes).where(eq(mfaBackupCodes.userId, userId));
  }
}
