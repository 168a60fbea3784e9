import { Injectable } from '@nestjs/common';
import { and, desc, eq, gt, gte, inArray, isNull, lt, lte, ne, or, sql, type SQL } from 'drizzle-orm';
import { type PageRequest, pageWithTotal, TransactionHost } from '#platform';
import { incidents, type IncidentRow, type IncidentStatus } from './incident.schema.js';

/** How long before its deadline an open incident's owners and admins are told it is due. */
export const DUE_SOON_WINDOW_MS = 24 * 3_600_000;

export interface IncidentFilter {
  status?: IncidentStatus;
  /** true: open and past the deadline at `now`; false: everything else. */
  overdue?: boolean;
  now: Date;
}

/** The incidents table; every method takes the organization id first. */
@Injectable()
export class IncidentsRepository {
  constructor(private readonly tx: TransactionHost) {}

  async list(
    organizationId: string,
    filter: IncidentFilter,
    page: PageRequest,
  ): Promise<{ rows: IncidentRow[]; total: number }> {
    const i = incidents;
    const conditions: SQL[] = [eq(i.organizationId, organizationId)];
    if (filter.status) conditions.push(eq(i.status, filter.status));
    if (filter.overdue === true) conditions.push(eq(i.status, 'open'), lt(i.deadlineAt, filter.now));
    if (filter.overdue === false) conditions.push(or(ne(i.status, 'open'), gte(i.deadlineAt, filter.now))!);
    const where = and(...conditions)!;
    return pageWithTotal(
      this.tx.db,
      i,
      where,
      this.tx.db
        .select()
        .from(i)
        .where(where)
        .orderBy(desc(i.createdAt), desc(i.id))
        .limit(page.limit)
        .offset(page.offset),
    );
  }

  async find(organizationId: string, id: string): Promise<IncidentRow | undefined> {
    const [row] = await this.tx.db
      .select()
      .from(incidents)
      .where(and(eq(incidents.organizationId, organizationId), eq(incidents.id, id)))
      .limit(1);
    return row;
  }

  async insert(row: typeof incidents.$inferInsert): Promise<IncidentRow> {
    const [created] = await this.tx.db.insert(incidents).values(row).returning();
    return created!;
  }

  /** Updates the incident only if it is still in `expected`, so two concurrent moves cannot both apply. */
  async updateIn(
    organizationId: string,
    id: string,
    expected: IncidentStatus,
    set: Partial<typeof incidents.$inferInsert>,
  ): Promise<IncidentRow | undefined> {
    const [row] = await this.tx.db
      .update(incidents)
      .set(set)
      .where(
        and(
          eq(incidents.organizationId, organizationId),
          eq(incidents.id, id),
          eq(incidents.status, expected),
        ),
      )
      .returning();
    return row;
  }

  /** How many open incidents, of one agent or all, are past their deadline at `now`. */
  async overdueCount(organizationId: string, now: Date, agentId?: string | null): Promise<number> {
    const [row] = await this.tx.db
      .select({ n: sql<number>`count(*)::int` })
      .from(incidents)
      .where(
        and(
          eq(incidents.organizationId, organizationId),
          eq(incidents.status, 'open'),
          lt(incidents.deadlineAt, now),
          agentId ? eq(incidents.agentId, agentId) : undefined,
        ),
      );
    return Number(row?.n ?? 0);
  }

  /** The open incidents, nearest deadline first (at most `limit`), how many are open and how many overdue at `now`. */
  async openByDeadline(
    organizationId: string,
    now: Date,
    limit: number,
  ): Promise<{ rows: IncidentRow[]; open: number; overdue: number }> {
    const where = and(eq(incidents.organizationId, organizationId), eq(incidents.status, 'open'))!;
    const [counts] = await this.tx.db
      .select({
        open: sql<number>`count(*)::int`,
        overdue: sql<number>`count(*) filter (where ${incidents.deadlineAt} < ${now})::int`,
      })
      .from(incidents)
      .where(where);
    const rows =
      limit > 0
        ? await this.tx.db
            .select()
            .from(incidents)
            .where(where)
            .orderBy(incidents.deadlineAt, incidents.id)
            .limit(limit)
        : [];
    return { rows, open: Number(counts?.open ?? 0), overdue: Number(counts?.overdue ?? 0) };
  }

  /**
   * Claims, across all organizations, up to `limit` open incidents whose deadline is within the next 24 hours and
   * whose due-soon notice is not sent yet: sets `dueSoonNoticeAt` to `now` and returns them. One statement; the
   * rows are chosen with `FOR UPDATE SKIP LOCKED` and the conditions checked again by the update, so concurrent
   * claims (of any replica) never return an incident twice. Call it in the transaction that sends the notices.
   */
  async claimDueSoon(now: Date, limit: number): Promise<IncidentRow[]> {
    const i = incidents;
    const due = and(
      eq(i.status, 'open'),
      isNull(i.dueSoonNoticeAt),
      gt(i.deadlineAt, now),
      lte(i.deadlineAt, new Date(now.getTime() + DUE_SOON_WINDOW_MS)),
    )!;
    return this.claim(due, { dueSoonNoticeAt: now }, limit);
  }

  /**
   * Claims, across all organizations, up to `limit` open incidents past their deadline whose overdue notice is not
   * sent yet: sets `overdueNoticeAt` to `now`, and `dueSoonNoticeAt` too when it is still unset (an incident already
   * overdue is never told afterwards that it is due soon). Same guarantees as `claimDueSoon`.
   */
  async claimOverdue(now: Date, limit: number): Promise<IncidentRow[]> {
    const i = incidents;
    const due = and(eq(i.status, 'open'), isNull(i.overdueNoticeAt), lte(i.deadlineAt, now))!;
    return this.claim(
      due,
      {
        overdueNoticeAt: now,
        dueSoonNoticeAt: sql`coalesce(${i.dueSoonNoticeAt}, ${now.toISOString()}::timestamptz)`,
      },
      limit,
    );
  }

  private async claim(
    due: SQL,
    set: Partial<Record<'dueSoonNoticeAt' | 'overdueNoticeAt', Date | SQL>>,
    limit: number,
  ): Promise<IncidentRow[]> {
    const i = incidents;
    const picked = this.tx.db
      .select({ id: i.id })
      .from(i)
      .where(due)
      .orderBy(i.deadlineAt, i.id)
      .limit(limit)
      .for('update', { skipLocked: true });
    return this.tx.db
      .update(i)
      .set(set)
      .where(and(inArray(i.id, picked), due))
      .returning();
  }
}
