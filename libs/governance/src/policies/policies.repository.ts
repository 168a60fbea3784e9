import { Inject, Injectable } from '@nestjs/common';
import { and, asc, eq, sql } from 'drizzle-orm';
import { DATABASE, type DatabaseHandle, type PageRequest, pageWithTotal, TransactionHost } from '#platform';
import { policies, type PolicyRow } from './policy.schema.js';

/** The channel on which a policy change is announced to every replica; the payload is the organization id. */
export const POLICY_CHANGED_CHANNEL = 'svc_policy_changed';

export type PolicyPatch = Partial<
  Pick<
    PolicyRow,
    'name' | 'description' | 'outcome' | 'conditions' | 'match' | 'agentIds' | 'priority' | 'isActive'
  >
>;

/** Evaluation order: the order `evaluate` reports in and listings show. */
const ORDER = [asc(policies.priority), asc(policies.createdAt), asc(policies.id)];

@Injectable()
export class PoliciesRepository {
  constructor(
    private readonly tx: TransactionHost,
    @Inject(DATABASE) private readonly handle: DatabaseHandle,
  ) {}

  async insert(row: typeof policies.$inferInsert): Promise<PolicyRow> {
    const [inserted] = await this.tx.db.insert(policies).values(row).returning();
    return inserted!;
  }

  async list(
    organizationId: string,
    includeInactive: boolean,
    page: PageRequest,
  ): Promise<{ rows: PolicyRow[]; total: number }> {
    const where = includeInactive
      ? eq(policies.organizationId, organizationId)
      : and(eq(policies.organizationId, organizationId), eq(policies.isActive, true));
    return pageWithTotal(
      this.tx.db,
      policies,
      where,
      this.tx.db
        .select()
        .from(policies)
        .where(where)
        .orderBy(...ORDER)
        .limit(page.limit)
        .offset(page.offset),
    );
  }

  async find(organizationId: string, id: string): Promise<PolicyRow | undefined> {
    const [row] = await this.tx.db
      .select()
      .from(policies)
      .where(and(eq(policies.id, id), eq(policies.organizationId, organizationId)))
      .limit(1);
    return row;
  }

  /** Locked until the transaction ends: an update validates the merged policy, so it must not interleave. */
  async findForUpdate(organizationId: string, id: string): Promise<PolicyRow | undefined> {
    const [row] = await this.tx.db
      .select()
      .from(policies)
      .where(and(eq(policies.id, id), eq(policies.organizationId, organizationId)))
      .limit(1)
      .for('update');
    return row;
  }

  /** The organization's policies whose agentIds name the agent, locked until the transaction ends, in id order. */
  async findNamingAgentForUpdate(organizationId: string, agentId: string): Promise<PolicyRow[]> {
    return this.tx.db
      .select()
      .from(policies)
      .where(and(eq(policies.organizationId, organizationId), sql`${agentId} = any(${policies.agentIds})`))
      .orderBy(asc(policies.id))
      .for('update');
  }

  async update(
    organizationId: string,
    id: string,
    patch: PolicyPatch,
    updatedAt: Date,
  ): Promise<PolicyRow | undefined> {
    const [row] = await this.tx.db
      .update(policies)
      .set({ ...patch, updatedAt })
      .where(and(eq(policies.id, id), eq(policies.organizationId, organizationId)))
      .returning();
    return row;
  }

  async delete(organizationId: string, id: string): Promise<PolicyRow | undefined> {
    const [row] = await this.tx.db
      .delete(policies)
      .where(and(eq(policies.id, id), eq(policies.organizationId, organizationId)))
      .returning();
    return row;
  }

  /**
   * The active policies the cache compiles. On PostgreSQL it reads from the pool, outside any caller's
   * transaction, because one load is shared by concurrent callers and must not fail with (or see the
   * uncommitted writes of) one of them. PGlite has a single connection that an open transaction holds, so a
   * read beside it would wait forever: there it joins the ambient transaction.
   */
  async listActiveForEvaluation(organizationId: string): Promise<PolicyRow[]> {
    const db = this.handle.driver === 'postgres' ? this.handle.db : this.tx.db;
    return db
      .select()
      .from(policies)
      .where(and(eq(policies.organizationId, organizationId), eq(policies.isActive, true)))
      .orderBy(...ORDER);
  }
}
