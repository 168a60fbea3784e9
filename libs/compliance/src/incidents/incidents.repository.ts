import { Injectable } from '@nestjs/common';
import { and, desc, eq, gte, lt, ne, or, type SQL } from 'drizzle-orm';
import { type PageRequest, pageWithTotal, TransactionHost } from '#platform';
import { incidents, type IncidentRow, type IncidentStatus } from './incident.schema.js';

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
        and(eq(incidents.organizationId, organizationId), eq(incidents.id, id), eq(incidents.status, expected)),
      )
      .returning();
    return row;
  }
}
