import { Injectable } from '@nestjs/common';
import { and, count, desc, eq, inArray } from 'drizzle-orm';
import { type PageRequest, pageWithTotal, TransactionHost } from '#platform';
import { isOrganizationLive } from '#identity';
import { integrations, type IntegrationRow } from './integration.schema.js';

type Insert = typeof integrations.$inferInsert;

/** The integrations table; every method takes the organization id first. */
@Injectable()
export class IntegrationsRepository {
  constructor(private readonly tx: TransactionHost) {}

  async list(organizationId: string, page: PageRequest): Promise<{ rows: IntegrationRow[]; total: number }> {
    const where = eq(integrations.organizationId, organizationId);
    return pageWithTotal(
      this.tx.db,
      integrations,
      where,
      this.tx.db
        .select()
        .from(integrations)
        .where(where)
        .orderBy(desc(integrations.createdAt), desc(integrations.id))
        .limit(page.limit)
        .offset(page.offset),
    );
  }

  async count(organizationId: string): Promise<number> {
    const [row] = await this.tx.db
      .select({ n: count() })
      .from(integrations)
      .where(eq(integrations.organizationId, organizationId));
    return row?.n ?? 0;
  }

  async find(organizationId: string, id: string): Promise<IntegrationRow | undefined> {
    const [row] = await this.tx.db
      .select()
      .from(integrations)
      .where(and(eq(integrations.organizationId, organizationId), eq(integrations.id, id)))
      .limit(1);
    return row;
  }

  /** The integration, locked until the transaction ends (a recipient's confirmation against a concurrent edit). */
  async findForUpdate(organizationId: string, id: string): Promise<IntegrationRow | undefined> {
    const [row] = await this.tx.db
      .select()
      .from(integrations)
      .where(and(eq(integrations.organizationId, organizationId), eq(integrations.id, id)))
      .limit(1)
      .for('update');
    return row;
  }

  /** Whether the organization exists and is not deleted (a notification to a deleted one is dropped). */
  async organizationLive(organizationId: string): Promise<boolean> {
    return isOrganizationLive(this.tx.db, organizationId);
  }

  /** Which of these ids are integrations of the organization. */
  async existingIds(organizationId: string, ids: readonly string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows = await this.tx.db
      .select({ id: integrations.id })
      .from(integrations)
      .where(and(eq(integrations.organizationId, organizationId), inArray(integrations.id, [...ids])));
    return new Set(rows.map((r) => r.id));
  }

  async insert(row: Insert): Promise<IntegrationRow> {
    const [created] = await this.tx.db.insert(integrations).values(row).returning();
    return created!;
  }

  async update(
    organizationId: string,
    id: string,
    set: Partial<Insert>,
  ): Promise<IntegrationRow | undefined> {
    const [row] = await this.tx.db
      .update(integrations)
      .set(set)
      .where(and(eq(integrations.organizationId, organizationId), eq(integrations.id, id)))
      .returning();
    return row;
  }

  async delete(organizationId: string, id: string): Promise<IntegrationRow | undefined> {
    const [row] = await this.tx.db
      .delete(integrations)
      .where(and(eq(integrations.organizationId, organizationId), eq(integrations.id, id)))
      .returning();
    return row;
  }
}
