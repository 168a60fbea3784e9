import { Injectable } from '@nestjs/common';
import { and, asc, count, desc, eq, gt, gte, like, lte, ne, sql, type SQL } from 'drizzle-orm';
import { auditEntries, type AuditEntryRow, pageWithTotal, TransactionHost } from '#platform';
import { auditChainCheckpoints, type AuditChainCheckpointRow } from './audit-checkpoint.schema.js';

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
    return this.page(this.filterWhere(organizationId, filter), desc(auditEntries.sequence), page);
  }

  /**
   * The entries about one target, oldest first, through audit_entries_org_target_idx (partial: not for traces,
   * whose entries are nearly all of the log and have no history route).
   */
  async listForTarget(
    organizationId: string,
    targetType: string,
    targetId: string,
    page: { limit: number; offset: number },
  ): Promise<{ rows: AuditEntryRow[]; total: number }> {
    const where = and(
      eq(auditEntries.organizationId, organizationId),
      eq(auditEntries.targetType, targetType),
      eq(auditEntries.targetId, targetId),
      // Repeats the partial index's predicate, so that the planner can use it whatever the parameter's value.
      ne(auditEntries.targetType, 'trace'),
    )!;
    return this.page(where, asc(auditEntries.sequence), page);
  }

  /** One page of the entries matching `where`, in `order`, with the total. */
  private page(
    where: SQL,
    order: SQL,
    page: { limit: number; offset: number },
  ): Promise<{ rows: AuditEntryRow[]; total: number }> {
    return pageWithTotal(
      this.tx.db,
      auditEntries,
      where,
      this.tx.db
        .select()
        .from(auditEntries)
        .where(where)
        .orderBy(order)
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

  async bounds(
    organizationId: string,
  ): Promise<{ total: number; first: Date | null; last: Date | null; headHash: string | null }> {
    const [row] = await this.tx.db
      .select({
        total: count(),
        first: sql<string | null>`min(${auditEntries.createdAt})`,
        last: sql<string | null>`max(${auditEntries.createdAt})`,
        headHash: sql<
          string | null
        >`(select h.hash from ${auditEntries} h where h.organization_id = ${organizationId}
          order by h.sequence desc limit 1)`,
      })
      .from(auditEntries)
      .where(eq(auditEntries.organizationId, organizationId));
    return {
      headHash: row?.headHash ?? null,
      total: row?.total ?? 0,
      first: row?.first ? new Date(row.first) : null,
      last: row?.last ? new Date(row.last) : null,
    };
  }

  async checkpoint(organizationId: string): Promise<AuditChainCheckpointRow | undefined> {
    const [row] = await this.tx.db
      .select()
      .from(auditChainCheckpoints)
      .where(eq(auditChainCheckpoints.organizationId, organizationId))
      .limit(1);
    return row;
  }

  /**
   * Moves the checkpoint to a verified entry; never backwards (two verifications finishing in either order leave
   * the later entry). `fullyVerifiedAt` is kept unless this verification started from the first entry.
   */
  async saveCheckpoint(
    organizationId: string,
    at: { sequence: number; hash: string },
    verifiedAt: Date,
    fully: boolean,
  ): Promise<void> {
    const c = auditChainCheckpoints;
    await this.tx.db
      .insert(c)
      .values({
        organizationId,
        sequence: at.sequence,
        hash: at.hash,
        fullyVerifiedAt: verifiedAt,
        verifiedAt,
      })
      .onConflictDoUpdate({
        target: c.organizationId,
        set: {
          sequence: sql`excluded.sequence`,
          hash: sql`excluded.hash`,
          verifiedAt: sql`excluded.verified_at`,
          ...(fully ? { fullyVerifiedAt: sql`excluded.fully_verified_at` } : {}),
        },
        setWhere: sql`${c.sequence} <= excluded.sequence`,
      });
  }
}
