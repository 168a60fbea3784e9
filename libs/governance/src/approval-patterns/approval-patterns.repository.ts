import { Injectable } from '@nestjs/common';
import { and, desc, eq, inArray, sql, type SQL } from 'drizzle-orm';
import { newId, type PageRequest, pageWithTotal, TransactionHost } from '#platform';
import {
  type ApprovalPatternRow,
  approvalPatterns,
  type ApprovalPatternStatus,
} from './approval-pattern.schema.js';
import {
  PATTERN_APPROVAL_PERCENT,
  PATTERN_MIN_OBSERVATIONS,
  type PatternSignature,
  signatureHash,
} from './approval-pattern.signature.js';

export interface PatternFilter {
  status?: ApprovalPatternStatus;
  agentId?: string;
}

/** The approval_patterns table; every method takes the organization id. */
@Injectable()
export class ApprovalPatternsRepository {
  constructor(private readonly tx: TransactionHost) {}

  /**
   * Counts one observation of the signature (an approval or not), creating its pattern on the first, in one
   * statement. An observing pattern that now qualifies awaits signoff; one awaiting signoff that no longer qualifies
   * observes again. Returns the pattern after, and its status before.
   */
  async observe(
    organizationId: string,
    signature: PatternSignature,
    approved: boolean,
    now: Date,
  ): Promise<{ row: ApprovalPatternRow; previous: ApprovalPatternStatus | null }> {
    const p = approvalPatterns;
    const approval = approved ? 1 : 0;
    const qualifies = sql`(${p.observations} + 1 >= ${PATTERN_MIN_OBSERVATIONS}
      and (${p.approvals} + ${approval}) * 100 >= ${PATTERN_APPROVAL_PERCENT} * (${p.observations} + 1))`;
    const existing = this.tx.db
      .select({ status: p.status })
      .from(p)
      .where(and(eq(p.organizationId, organizationId), eq(p.signature, signatureHash(signature))))
      .for('update');
    const [before] = await existing;
    const [row] = await this.tx.db
      .insert(p)
      .values({
        id: newId(now.getTime()),
        organizationId,
        signature: signatureHash(signature),
        agentId: signature.agentId,
        action: signature.action,
        policyIds: signature.policyIds,
        status: 'observing',
        observations: 1,
        approvals: approval,
        createdAt: now,
        updatedAt: now,
      })
      .onConflictDoUpdate({
        target: [p.organizationId, p.signature],
        set: {
          observations: sql`${p.observations} + 1`,
          approvals: sql`${p.approvals} + ${approval}`,
          status: sql`case
            when ${p.status} = 'observing' and ${qualifies} then 'pending_signoff'
            when ${p.status} = 'pending_signoff' and not ${qualifies} then 'observing'
            else ${p.status} end`,
          updatedAt: now,
        },
      })
      .returning();
    return { row: row!, previous: before?.status ?? null };
  }

  async list(
    organizationId: string,
    filter: PatternFilter,
    page: PageRequest,
  ): Promise<{ rows: ApprovalPatternRow[]; total: number }> {
    const conditions: SQL[] = [eq(approvalPatterns.organizationId, organizationId)];
    if (filter.status) conditions.push(eq(approvalPatterns.status, filter.status));
    if (filter.agentId) conditions.push(eq(approvalPatterns.agentId, filter.agentId));
    const where = and(...conditions);
    return pageWithTotal(
      this.tx.db,
      approvalPatterns,
      where,
      this.tx.db
        .select()
        .from(approvalPatterns)
        .where(where)
        .orderBy(desc(approvalPatterns.updatedAt), desc(approvalPatterns.id))
        .limit(page.limit)
        .offset(page.offset),
    );
  }

  async find(organizationId: string, id: string): Promise<ApprovalPatternRow | undefined> {
    const [row] = await this.tx.db
      .select()
      .from(approvalPatterns)
      .where(and(eq(approvalPatterns.organizationId, organizationId), eq(approvalPatterns.id, id)))
      .limit(1);
    return row;
  }

  /** Moves a pattern from one of `from` to `status`; undefined when it is not in one of them (or not found). */
  async transition(
    organizationId: string,
    id: string,
    from: ApprovalPatternStatus[],
    set: Partial<typeof approvalPatterns.$inferInsert> & { status: ApprovalPatternStatus; updatedAt: Date },
  ): Promise<ApprovalPatternRow | undefined> {
    const [row] = await this.tx.db
      .update(approvalPatterns)
      .set(set)
      .where(
        and(
          eq(approvalPatterns.organizationId, organizationId),
          eq(approvalPatterns.id, id),
          inArray(approvalPatterns.status, from),
        ),
      )
      .returning();
    return row;
  }

  /** The organization's active patterns: signature → pattern id (the ingestion cache's load). */
  async activeSignatures(organizationId: string): Promise<Map<string, string>> {
    const rows = await this.tx.db
      .select({ id: approvalPatterns.id, signature: approvalPatterns.signature })
      .from(approvalPatterns)
      .where(and(eq(approvalPatterns.organizationId, organizationId), eq(approvalPatterns.status, 'active')));
    return new Map(rows.map((row) => [row.signature, row.id]));
  }
}
