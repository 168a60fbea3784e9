import { Injectable } from '@nestjs/common';
import { and, asc, count, desc, eq, gt, gte, like, lte, sql, type SQL } from 'drizzle-orm';
import { bulkInsert, TransactionHost } from '../../../platform/src/index.js';
import { auditEntries, type AuditEntryRow } from './audit.schema.js';

export interface AuditFilter {
  from?: Date;
  to?: Date;
  eventType?: string;
  userId?: string;
}

function escapeLike(value: string): string {
  return value.replace(/[\\%_]/g, (c) => `\\${c}`);
}

@Injectable()
export class AuditRepository {
  constructor(private readonly tx: TransactionHost) {}

  /**
   * Serialises appends to these organizations' chains until the surrounding transaction ends. With READ COMMITTED
   * the next statement then sees the previous holder's committed entries, so a chain never forks.
   */
  lockChains(organizationIds: string[]): Promise<void> {
    return this.tx.lock(...organizationIds.map((id) => `audit:${id}`));
  }

  /** The last entry (sequence and hash) of each organization's chain; an organization without entries is absent. */
  async heads(organizationIds: string[]): Promise<Map<string, Pick<AuditEntryRow, 'sequence' | 'hash'>>> {
    const result = await this.tx.db.execute(sql`
      select o.id as organization_id, h.sequence, h.hash
      from unnest(${sql.param(organizationIds)}::text[]) as o(id)
      join lateral (
        select ${auditEntries.sequence} as sequence, ${auditEntries.hash} as hash from ${auditEntries}
          where ${auditEntries.organizationId} = o.id order by ${auditEntries.sequence} desc limit 1
      ) h on true`);
    const rows = (
      result as unknown as { rows: { organization_id: string; sequence: number | string; hash: string }[] }
    ).rows;
    // bigint arrives as a number from node-postgres (its type parser) and may arrive otherwise from PGlite.
    return new Map(rows.map((r) => [r.organization_id, { sequence: Number(r.sequence), hash: r.hash }]));
  }

  async insertMany(rows: AuditEntryRow[]): Promise<void> {
    await this.tx.db.execute(bulkInsert(auditEntries, rows));
  }

  private filterWhere(organizationId: string, filter: AuditFilter): SQL {
    const conditions: SQL[] = [eq(auditEntries.organizationId, organizationId)];
    if (filter.from) conditions.push(gte(auditEntries.createdAt, filter.from));
    if (filter.to) conditions.push(lte(auditEntries.createdAt, filter.to));
    if (filter.userId) conditions.push(eq(auditEntries.userId, filter.userId));
    if (filter.eventType) {
      conditions.push(
        filter.eventType.endsWith('*')
          ? like(auditEntries.eventType, `${escapeLike(filter.eventType.slice(0, -1))}%`)
          : eq(auditEntries.eventType, filter.eventType),
      );
    }
    return and(...conditions)!;
  }

  async list(
    organizationId: string,
    filter: AuditFilter,
    page: { limit: number; offset: number },
  ): Promise<{ rows: AuditEntryRow[]; total: number }> {
    const where = this.filterWhere(organizationId, filter);
    const [rows, [totals]] = await Promise.all([
      this.tx.db
        .select()
        .from(auditEntries)
        .where(where)
        .orderBy(desc(auditEntries.sequence))
        .limit(page.limit)
        .offset(page.offset),
      this.tx.db.select({ total: count() }).from(auditEntries).where(where),
    ]);
    return { rows, total: totals?.total ?? 0 };
  }

  async findById(organizationId: string, id: string): Promise<AuditEntryRow | undefined> {
    const [row] = await this.tx.db
      .select()
      .from(auditEntries)
      .where(and(eq(auditEntries.organizationId, organizationId), eq(auditEntries.id, id)))
      .limit(1);
    return row;
  }

  /** One batch of the chain in sequence order, after `afterSequence` (keyset pagination). */
  async batch(organizationId: string, afterSequence: number, limit: number): Promise<AuditEntryRow[]> {
    return this.tx.db
      .select()
      .from(auditEntries)
      .where(and(eq(auditEntries.organizationId, organizationId), gt(auditEntries.sequence, afterSequence)))
      .orderBy(asc(auditEntries.sequence))
      .limit(limit);
  }

  async bounds(organizationId: string): Promise<{ total: number; first: Date | null; last: Date | null }> {
    const [row] = await this.tx.db
      .select({
        total: count(),
        first: sql<string | null>`min(${auditEntries.createdAt})`,
        last: sql<string | null>`max(${auditEntries.createdAt})`,
      })
      .from(auditEntries)
      .where(eq(auditEntries.organizationId, organizationId));
    return {
      total: row?.total ?? 0,
      first: row?.first ? new Date(row.first) : null,
      last: row?.last ? new Date(row.last) : null,
    };
  }
}
