import { Injectable } from '@nestjs/common';
import { and, desc, eq, ilike, isNull, sql, type SQL } from 'drizzle-orm';
import { type PageRequest, pageWithTotal, TransactionHost } from '#platform';
import { friaAssessments, type FriaRow, type FriaStatus } from './fria.schema.js';

export interface FriaFilter {
  status?: FriaStatus;
  search?: string;
}

type FriaInsert = typeof friaAssessments.$inferInsert;

/** Escapes LIKE wildcards so a search for "50%" matches the text, not everything. */
function likeSubstring(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** The fria_assessments table; every method takes the organization id first. */
@Injectable()
export class FriaRepository {
  constructor(private readonly tx: TransactionHost) {}

  async list(
    organizationId: string,
    filter: FriaFilter,
    page: PageRequest,
  ): Promise<{ rows: FriaRow[]; total: number }> {
    const f = friaAssessments;
    const conditions: SQL[] = [eq(f.organizationId, organizationId)];
    if (filter.status) conditions.push(eq(f.status, filter.status));
    if (filter.search) conditions.push(ilike(f.systemName, likeSubstring(filter.search)));
    const where = and(...conditions);
    return pageWithTotal(
      this.tx.db,
      f,
      where,
      this.tx.db
        .select()
        .from(f)
        .where(where)
        .orderBy(desc(f.updatedAt), desc(f.id))
        .limit(page.limit)
        .offset(page.offset),
    );
  }

  async find(organizationId: string, id: string): Promise<FriaRow | undefined> {
    const f = friaAssessments;
    const [row] = await this.tx.db
      .select()
      .from(f)
      .where(and(eq(f.organizationId, organizationId), eq(f.id, id)))
      .limit(1);
    return row;
  }

  /** Whether the assessment exists, for modules that reference assessments (evidence refs). */
  async exists(organizationId: string, id: string): Promise<boolean> {
    const f = friaAssessments;
    const [row] = await this.tx.db
      .select({ id: f.id })
      .from(f)
      .where(and(eq(f.organizationId, organizationId), eq(f.id, id)))
      .limit(1);
    return row !== undefined;
  }

  async insert(row: FriaInsert): Promise<FriaRow> {
    const [created] = await this.tx.db.insert(friaAssessments).values(row).returning();
    return created!;
  }

  /**
   * Updates the assessment only if it is still in `expected` (conditional, so two concurrent changes cannot both
   * apply); undefined when it is not (or not found).
   */
  async updateIn(
    organizationId: string,
    id: string,
    expected: FriaStatus,
    set: Partial<FriaInsert>,
  ): Promise<FriaRow | undefined> {
    const f = friaAssessments;
    const [row] = await this.tx.db
      .update(f)
      .set(set)
      .where(and(eq(f.organizationId, organizationId), eq(f.id, id), eq(f.status, expected)))
      .returning();
    return row;
  }

  /** Deletes a draft never submitted; undefined when there is no such assessment. */
  async deleteUnsubmittedDraft(organizationId: string, id: string): Promise<FriaRow | undefined> {
    const f = friaAssessments;
    const [row] = await this.tx.db
      .delete(f)
      .where(
        and(
          eq(f.organizationId, organizationId),
          eq(f.id, id),
          eq(f.status, 'draft'),
          isNull(f.firstSubmittedAt),
        ),
      )
      .returning();
    return row;
  }

  /** Assessments per status. */
  async countByStatus(organizationId: string): Promise<Map<FriaStatus, number>> {
    const rows = await this.tx.db
      .select({ status: friaAssessments.status, n: sql<number>`count(*)::int` })
      .from(friaAssessments)
      .where(eq(friaAssessments.organizationId, organizationId))
      .groupBy(friaAssessments.status);
    return new Map(rows.map((r) => [r.status, Number(r.n)]));
  }
}
