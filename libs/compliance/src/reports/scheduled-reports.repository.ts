import { Injectable } from '@nestjs/common';
import { and, desc, eq, inArray, isNull, lt, lte, or, sql, type SQL } from 'drizzle-orm';
import { type PageRequest, pageWithTotal, TransactionHost } from '#platform';
import { organizationIsLive } from '#identity';
import { scheduledReports, type ScheduledReportRow } from './scheduled-report.schema.js';

type Insert = typeof scheduledReports.$inferInsert;

/** The scheduled_reports table; every method but the scheduler's claim takes the organization id first. */
@Injectable()
export class ScheduledReportsRepository {
  constructor(private readonly tx: TransactionHost) {}

  async list(
    organizationId: string,
    includeInactive: boolean,
    page: PageRequest,
  ): Promise<{ rows: ScheduledReportRow[]; total: number }> {
    const r = scheduledReports;
    const where = includeInactive
      ? eq(r.organizationId, organizationId)
      : and(eq(r.organizationId, organizationId), eq(r.isActive, true))!;
    return pageWithTotal(
      this.tx.db,
      r,
      where,
      this.tx.db
        .select()
        .from(r)
        .where(where)
        .orderBy(desc(r.createdAt), desc(r.id))
        .limit(page.limit)
        .offset(page.offset),
    );
  }

  async find(organizationId: string, id: string): Promise<ScheduledReportRow | undefined> {
    const [row] = await this.tx.db
      .select()
      .from(scheduledReports)
      .where(and(eq(scheduledReports.organizationId, organizationId), eq(scheduledReports.id, id)))
      .limit(1);
    return row;
  }

  async insert(row: Insert): Promise<ScheduledReportRow> {
    const [created] = await this.tx.db.insert(scheduledReports).values(row).returning();
    return created!;
  }

  async update(
    organizationId: string,
    id: string,
    set: Partial<Insert>,
  ): Promise<ScheduledReportRow | undefined> {
    const [row] = await this.tx.db
      .update(scheduledReports)
      .set(set)
      .where(and(eq(scheduledReports.organizationId, organizationId), eq(scheduledReports.id, id)))
      .returning();
    return row;
  }

  async delete(organizationId: string, id: string): Promise<ScheduledReportRow | undefined> {
    const [row] = await this.tx.db
      .delete(scheduledReports)
      .where(and(eq(scheduledReports.organizationId, organizationId), eq(scheduledReports.id, id)))
      .returning();
    return row;
  }

  /**
   * The scheduler's claim, across organizations (not deleted ones): up to `limit` active reports due at `now` and not claimed by a
   * live lease, leased until `leaseUntil`. One statement; rows are picked with `FOR UPDATE SKIP LOCKED` and the
   * conditions checked again by the update, so two replicas never claim the same report.
   */
  async claimDue(now: Date, leaseUntil: Date, limit: number): Promise<ScheduledReportRow[]> {
    const r = scheduledReports;
    const due: SQL = and(
      eq(r.isActive, true),
      lte(r.nextSendAt, now),
      or(isNull(r.claimedUntil), lt(r.claimedUntil, now)),
      organizationIsLive(r.organizationId),
    )!;
    const picked = this.tx.db
      .select({ id: r.id })
      .from(r)
      .where(due)
      .orderBy(r.nextSendAt, r.id)
      .limit(limit)
      .for('update', { skipLocked: true });
    return this.tx.db
      .update(r)
      .set({ claimedUntil: leaseUntil })
      .where(and(inArray(r.id, picked), due))
      .returning();
  }

  /**
   * Records a successful send: lastSentAt, one more send, the next due time when given (send-now leaves it), and
   * the claim released. Only while the claim is still the caller's (`claimedUntil`), when one was taken.
   */
  async recordSent(
    organizationId: string,
    id: string,
    at: Date,
    nextSendAt: Date | undefined,
    claimedUntil: Date | null,
  ): Promise<ScheduledReportRow | undefined> {
    const r = scheduledReports;
    const [row] = await this.tx.db
      .update(r)
      .set({
        lastSentAt: at,
        sentCount: sql`${r.sentCount} + 1`,
        ...(nextSendAt ? { nextSendAt } : {}),
        ...(claimedUntil ? { claimedUntil: null } : {}),
        updatedAt: at,
      })
      .where(
        and(
          eq(r.organizationId, organizationId),
          eq(r.id, id),
          claimedUntil ? eq(r.claimedUntil, claimedUntil) : undefined,
        ),
      )
      .returning();
    return row;
  }

  /** Gives a claim back after a failed send, so the next tick tries again. */
  async release(id: string, claimedUntil: Date): Promise<void> {
    await this.tx.db
      .update(scheduledReports)
      .set({ claimedUntil: null })
      .where(and(eq(scheduledReports.id, id), eq(scheduledReports.claimedUntil, claimedUntil)));
  }
}
