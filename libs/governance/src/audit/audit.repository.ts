import { Injectable } from '@nestjs/common';
import { and, asc, count, desc, eq, gt, gte, inArray, like, lte, ne, sql, type SQL } from 'drizzle-orm';
import { auditEntries, type AuditEntryRow, pageWithTotal, TransactionHost } from '#platform';
import { auditChainCheckpoints, type AuditChainCheckpointRow } from './audit-checkpoint.schema.js';
import {
  type AuditCheckpointRow,
  auditCheckpoints,
  type AuditSigningKeyRow,
  auditSigningKeys,
} from './audit-signing.schema.js';

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

  /**
   * One page, newest first, with its total. Without filters the total is the head's sequence (the chain has no
   * gaps: one index probe). With filters the count stops after `countCap` matches (or the end of the page asked
   * for, if further), so that a page of a log of millions answers in milliseconds; `capped` says the total is a
   * lower bound.
   */
  async list(
    organizationId: string,
    filter: AuditFilter,
    page: { limit: number; offset: number },
    countCap: number,
  ): Promise<{ rows: AuditEntryRow[]; total: number; capped: boolean }> {
    const where = this.filterWhere(organizationId, filter);
    const rows = this.tx.db
      .select()
      .from(auditEntries)
      .where(where)
      .orderBy(desc(auditEntries.sequence))
      .limit(page.limit)
      .offset(page.offset);
    const filtered = Boolean(filter.from || filter.to || filter.userId || filter.eventType);
    if (!filtered) {
      const [list, head] = await Promise.all([
        rows,
        this.tx.db
          .select({ sequence: auditEntries.sequence })
          .from(auditEntries)
          .where(eq(auditEntries.organizationId, organizationId))
          .orderBy(desc(auditEntries.sequence))
          .limit(1),
      ]);
      return { rows: list, total: head[0]?.sequence ?? 0, capped: false };
    }
    const cap = Math.max(countCap, page.offset + page.limit);
    const matches = this.tx.db
      .select({ one: sql`1` })
      .from(auditEntries)
      .where(where)
      .limit(cap + 1)
      .as('matches');
    const [list, [counted]] = await Promise.all([rows, this.tx.db.select({ n: count() }).from(matches)]);
    const n = counted?.n ?? 0;
    return { rows: list, total: Math.min(n, cap), capped: n > cap };
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

  /**
   * The entry of one of `eventTypes` about a trace, written within `windowMs` of `from` (the trace's own creation:
   * its entry is written in the same transaction, moments later). Trace entries are left out of the target index,
   * so the time range on audit_entries_org_created_idx, with the event types, keeps the read small.
   */
  async traceEntry(
    organizationId: string,
    traceId: string,
    eventTypes: readonly string[],
    from: Date,
    windowMs: number,
  ): Promise<AuditEntryRow | undefined> {
    const [row] = await this.tx.db
      .select()
      .from(auditEntries)
      .where(
        and(
          eq(auditEntries.organizationId, organizationId),
          gte(auditEntries.createdAt, from),
          lte(auditEntries.createdAt, new Date(from.getTime() + windowMs)),
          inArray(auditEntries.eventType, [...eventTypes]),
          eq(auditEntries.targetType, 'trace'),
          eq(auditEntries.targetId, traceId),
        ),
      )
      .orderBy(asc(auditEntries.sequence))
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

  /** The verified prefix: the entry up to which the chain last verified (see audit-checkpoint.schema.ts). */
  async verifiedPrefix(organizationId: string): Promise<AuditChainCheckpointRow | undefined> {
    const [row] = await this.tx.db
      .select()
      .from(auditChainCheckpoints)
      .where(eq(auditChainCheckpoints.organizationId, organizationId))
      .limit(1);
    return row;
  }

  /**
   * Moves the verified prefix to a verified entry; never backwards (two verifications finishing in either order
   * leave the later entry). A verification from the first entry stamps `fullyVerifiedAt` and clears a recorded
   * break whatever the order; one from the prefix leaves both as they are.
   */
  async saveVerifiedPrefix(
    organizationId: string,
    at: { sequence: number; hash: string },
    verifiedAt: Date,
    fully: boolean,
  ): Promise<void> {
    const c = auditChainCheckpoints;
    const later = sql`excluded.sequence >= ${c.sequence}`;
    await this.tx.db
      .insert(c)
      .values({
        organizationId,
        sequence: at.sequence,
        hash: at.hash,
        // A first verification that is not from the first entry has verified nothing in full yet.
        fullyVerifiedAt: fully ? verifiedAt : new Date(0),
        verifiedAt,
      })
      .onConflictDoUpdate({
        target: c.organizationId,
        set: {
          sequence: sql`case when ${later} then excluded.sequence else ${c.sequence} end`,
          hash: sql`case when ${later} then excluded.hash else ${c.hash} end`,
          verifiedAt: sql`greatest(${c.verifiedAt}, excluded.verified_at)`,
          ...(fully
            ? {
                fullyVerifiedAt: sql`greatest(${c.fullyVerifiedAt}, excluded.fully_verified_at)`,
                brokenSequence: sql`null`,
                brokenReason: sql`null`,
                brokenAt: sql`null`,
              }
            : {}),
        },
      });
  }

  /**
   * Records the break a verification found. Until a verification from the first entry passes, verifications start
   * from the first entry, no head is signed, and the checkpoint job skips the organization.
   */
  async recordBreak(
    organizationId: string,
    broken: { sequence: number; reason: string },
    at: Date,
  ): Promise<void> {
    const c = auditChainCheckpoints;
    await this.tx.db
      .insert(c)
      .values({
        organizationId,
        // No verified prefix yet: the row only carries the break.
        sequence: 0,
        hash: '0'.repeat(64),
        fullyVerifiedAt: new Date(0),
        verifiedAt: at,
        brokenSequence: broken.sequence,
        brokenReason: broken.reason,
        brokenAt: at,
      })
      .onConflictDoUpdate({
        target: c.organizationId,
        set: {
          brokenSequence: sql`excluded.broken_sequence`,
          brokenReason: sql`excluded.broken_reason`,
          brokenAt: sql`excluded.broken_at`,
        },
      });
  }

  /** Records a public key that signs checkpoints (once: a key already known keeps its first date). */
  async addSigningKey(key: AuditSigningKeyRow): Promise<void> {
    await this.tx.db.insert(auditSigningKeys).values(key).onConflictDoNothing();
  }

  /** Every key that has signed checkpoints, oldest first (a handful: one per rotation). */
  signingKeys(): Promise<AuditSigningKeyRow[]> {
    return this.tx.db.select().from(auditSigningKeys).orderBy(asc(auditSigningKeys.createdAt)).limit(1000);
  }

  /**
   * Stores a checkpoint; a head already signed with that key (by another replica, or a moment ago) keeps the first
   * checkpoint, which is returned instead.
   */
  async insertCheckpoint(row: AuditCheckpointRow): Promise<{ row: AuditCheckpointRow; created: boolean }> {
    const [inserted] = await this.tx.db
      .insert(auditCheckpoints)
      .values(row)
      .onConflictDoNothing()
      .returning();
    if (inserted) return { row: inserted, created: true };
    const [existing] = await this.tx.db
      .select()
      .from(auditCheckpoints)
      .where(
        and(
          eq(auditCheckpoints.organizationId, row.organizationId),
          eq(auditCheckpoints.sequence, row.sequence),
          eq(auditCheckpoints.keyId, row.keyId),
        ),
      )
      .limit(1);
    return { row: existing!, created: false };
  }

  /** Checkpoints, newest first. */
  listCheckpoints(
    organizationId: string,
    page: { limit: number; offset: number },
  ): Promise<{ rows: AuditCheckpointRow[]; total: number }> {
    const where = eq(auditCheckpoints.organizationId, organizationId);
    return pageWithTotal(
      this.tx.db,
      auditCheckpoints,
      where,
      this.tx.db
        .select()
        .from(auditCheckpoints)
        .where(where)
        .orderBy(desc(auditCheckpoints.createdAt), desc(auditCheckpoints.id))
        .limit(page.limit)
        .offset(page.offset),
    );
  }

  /**
   * When the newest signed checkpoint of any organization was made; undefined when none exists. Ids begin with their
   * creation second: the primary key finds the newest second in one probe, and only that second's rows are read.
   */
  async newestCheckpointAt(): Promise<Date | undefined> {
    const c = auditCheckpoints;
    const newestSecond = this.tx.db.select({ prefix: sql`left(max(${c.id}), 8)` }).from(c);
    const [row] = await this.tx.db
      .select({ at: sql<Date | null>`max(${c.createdAt})`.mapWith(c.createdAt) })
      .from(c)
      .where(gte(c.id, sql`(${newestSecond})`));
    return row?.at ?? undefined;
  }

  /** The checkpoint of the highest sequence (the one that bounds the chain's length). */
  async highestCheckpoint(organizationId: string): Promise<AuditCheckpointRow | undefined> {
    const [row] = await this.tx.db
      .select()
      .from(auditCheckpoints)
      .where(eq(auditCheckpoints.organizationId, organizationId))
      .orderBy(desc(auditCheckpoints.sequence), desc(auditCheckpoints.createdAt))
      .limit(1);
    return row;
  }

  /**
   * Organizations whose chain head is due a checkpoint: `entries` or more entries since their last checkpoint, or
   * an entry past it that is at least `minutes` old; not those whose chain has a recorded break. Every organization with entries is visited by a skip scan of
   * audit_entries_org_sequence_uq (one index probe per organization, not a read of the log), at most `limit`.
   */
  async dueForCheckpoint(now: Date, entries: number, minutes: number, limit: number): Promise<string[]> {
    const before = new Date(now.getTime() - minutes * 60_000);
    const result = await this.tx.db.execute(sql`
      with recursive orgs(id) as (
        (select organization_id from audit_entries order by organization_id limit 1)
        union all
        select (select a.organization_id from audit_entries a where a.organization_id > orgs.id
                order by a.organization_id limit 1)
        from orgs where orgs.id is not null
      )
      select o.id from orgs o
      join lateral (select sequence from audit_entries where organization_id = o.id
                    order by sequence desc limit 1) h on true
      left join lateral (select sequence from audit_checkpoints where organization_id = o.id
                         order by sequence desc limit 1) c on true
      where o.id is not null and h.sequence > coalesce(c.sequence, 0)
        -- A chain with a recorded break is not signed (until a full verification passes): not worth a walk a minute.
        and not exists (select 1 from audit_chain_checkpoints v where v.organization_id = o.id
                        and v.broken_sequence is not null)
        and (h.sequence - coalesce(c.sequence, 0) >= ${entries}
             or (select created_at from audit_entries where organization_id = o.id
                 and sequence = coalesce(c.sequence, 0) + 1) <= ${before.toISOString()}::timestamptz)
      limit ${limit}`);
    return (result as unknown as { rows: { id: string }[] }).rows.map((r) => String(r.id));
  }
}
