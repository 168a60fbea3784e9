import { Injectable } from '@nestjs/common';
import { count, desc, eq } from 'drizzle-orm';
import { Clock, newId, type RequestMeta, TransactionHost } from '../../../platform/src/index.js';
import { loginEvents, type LoginEventRow } from './login-event.schema.js';

export interface LoginEventInput {
  userId: string;
  organizationId?: string | null;
  method: string;
  success: boolean;
  reason?: string | null;
  meta?: RequestMeta;
}

@Injectable()
export class LoginEventsRepository {
  constructor(
    private readonly tx: TransactionHost,
    private readonly clock: Clock,
  ) {}

  async record(input: LoginEventInput): Promise<void> {
    const now = this.clock.now();
    await this.tx.db.insert(loginEvents).values({
      id: newId(now.getTime()),
      userId: input.userId,
      organizationId: input.organizationId ?? null,
      method: input.method,
      success: input.success,
      reason: input.reason ?? null,
      ip: input.meta?.ip ?? null,
      userAgent: input.meta?.userAgent ?? null,
      createdAt: now,
    });
  }

  async listForUser(
    userId: string,
    page: { limit: number; offset: number },
  ): Promise<{ rows: LoginEventRow[]; total: number }> {
    const [rows, [totals]] = await Promise.all([
      this.tx.db
        .select()
        .from(loginEvents)
        .where(eq(loginEvents.userId, userId))
        .orderBy(desc(loginEvents.createdAt), desc(loginEvents.id))
        .limit(page.limit)
        .offset(page.offset),
      this.tx.db.select({ total: count() }).from(loginEvents).where(eq(loginEvents.userId, userId)),
    ]);
    return { rows, total: totals?.total ?? 0 };
  }
}
