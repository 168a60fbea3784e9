import { Injectable } from '@nestjs/common';
import { and, count, desc, eq, gte, sql } from 'drizzle-orm';
import { Clock, newId, type RequestMeta, pageWithTotal, TransactionHost } from '#platform';
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

  /** The user's login events, newest first (those of one organization only, when given). */
  async listForUser(
    userId: string,
    page: { limit: number; offset: number },
    organizationId?: string,
  ): Promise<{ rows: LoginEventRow[]; total: number }> {
    const where = and(
      eq(loginEvents.userId, userId),
      organizationId ? eq(loginEvents.organizationId, organizationId) : undefined,
    );
    return pageWithTotal(
      this.tx.db,
      loginEvents,
      where,
      this.tx.db
        .select()
        .from(loginEvents)
        .where(where)
        .orderBy(desc(loginEvents.createdAt), desc(loginEvents.id))
        .limit(page.limit)
        .offset(page.offset),
    );
  }

  /** Failed attempts of one kind for a user since `since`: how many, and when the oldest of them happened. */
  async recentFailures(
    userId: string,
    reason: string,
    since: Date,
  ): Promise<{ count: number; oldest: Date | null }> {
    const [row] = await this.tx.db
      .select({ count: count(), oldest: sql<string | null>`min(${loginEvents.createdAt})` })
      .from(loginEvents)
      .where(
        and(
          eq(loginEvents.userId, userId),
          eq(loginEvents.success, false),
          eq(loginEvents.reason, reason),
          gte(loginEvents.createdAt, since),
        ),
      );
    return { count: row?.count ?? 0, oldest: row?.oldest ? new Date(row.oldest) : null };
  }
}
