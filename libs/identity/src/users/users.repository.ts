import { Injectable } from '@nestjs/common';
import { eq } from 'drizzle-orm';
import { TransactionHost } from '../../../platform/src/index.js';
import { users, type UserRow } from './user.schema.js';

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

  async recordLogin(id: string, ip: string | null, at: Date): Promise<void> {
    await this.tx.db.update(users).set({ lastLoginIp: ip, lastLoginAt: at }).where(eq(users.id, id));
  }
}
