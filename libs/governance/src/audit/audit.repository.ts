import { Injectable } from '@nestjs/common';
import { and, asc, count, desc, eq, gt, gte, like, lte, sql, type SQL } from 'drizzle-orm';
import { bulkInsert, lockStatement, type Query, pageWithTotal, TransactionHost, writeQuery } from '#platform';
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

export type ChainHead = Pick<AuditEntryRow, 'sequence' | 'hash'>;

const chainLockKey = (organizationId: string) => `audit:${organizationId}`;

function headsQuery(organizationIds: string[]): Query<Map<string, ChainHead>> {
  return {
    statements: [
      sql`select o.id as organization_id, h.sequence, h.hash
          from unnest(${sql.param(organizationIds)}::text[]) as o(id)
          join lateral (
            select ${auditEntries.sequence} as sequence, ${auditEntries.hash} as hash from ${auditEntries}
              where ${auditEntries.organizationId} = o.id order by ${auditEntries.sequence} desc limit 1
          ) h on true`,
    ],
    // bigint arrives as a number from node-postgres (its type parser) and may arrive otherwise from PGlite.
    read: ([rows]) =>
      new Map(
        rows!.map((r) => [String(r.organization_id), { sequence: Number(r.sequence), hash: String(r.hash) }]),
      ),
  };
}

@Injectable()
export class AuditRepository {
  constructor(private readonly tx: TransactionHost) {}

  /**
   * Serialises appends to these organizations' chains until the surrounding transaction ends. With READ COMMITTED
   * the next statement then sees the previous holder's committed entries, so a chain never forks.
   */
  lockChains(organizationIds: string[]): Promise<void> {
    return this.tx.lock(...organizationIds.map(chainLockKey));
  }

  /** The last entry (sequence and hash) of each organization's chain; an organization without entries is absent. */
  heads(organizationIds: string[]): Promise<Map<string, ChainHead>> {
    return this.tx.query(headsQuery(organizationIds));
  }

  /**
   * `lockChains` then `heads`, as one query for a pipelined transaction: the statements run in order, so the head
   * read takes its snapshot after the locks are granted.
   */
  openChainsQuery(organizationIds: string[]): Query<Map<string, ChainHead>> {
    const heads = headsQuery(organizationIds);
    return {
      statements: [lockStatement(organizationIds.map(chainLockKey)), ...heads.statements],
      read: ([, rows]) => heads.read([rows!]),
    };
  }

  insertQuery(rows: AuditEntryRow[]): Query<void> {
    return writeQuery(bulkInsert(auditEntries, rows));
  }

  insertMany(rows: AuditEntryRow[]): Promise<void> {
    return this.tx.query(this.insertQuery(rows));
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
    return pageWithTotal(
      this.tx.db,
      auditEntries,
      where,
      this.tx.db
        .select()
        .from(auditEntries)
        .where(where)
        .orderBy(desc(auditEntries.sequence))
        .limit(page.limit)
        .offset(page.offset),
    );
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
