import { Injectable } from '@nestjs/common';
import { and, desc, eq, inArray, sql, type SQL } from 'drizzle-orm';
import { type PageRequest, pageWithTotal, type Query, TransactionHost } from '#platform';
import type { OrganizationScopedId } from '#identity';
import { agents, type AgentRow } from './agent.schema.js';

/** The agents table. Their keys are rows of identity's `api_keys`, reached through its AgentKeysRepository. */
@Injectable()
export class AgentsRepository {
  constructor(private readonly tx: TransactionHost) {}

  async insert(row: typeof agents.$inferInsert): Promise<AgentRow> {
    const [inserted] = await this.tx.db.insert(agents).values(row).returning();
    return inserted!;
  }

  /** Agents of the organization, newest first; `agentIds` limits them (a scoped key), null means all. */
  async list(
    organizationId: string,
    agentIds: string[] | null,
    page: PageRequest,
  ): Promise<{ rows: AgentRow[]; total: number }> {
    if (agentIds !== null && agentIds.length === 0) return { rows: [], total: 0 };
    const conditions: SQL[] = [eq(agents.organizationId, organizationId)];
    if (agentIds !== null) conditions.push(inArray(agents.id, agentIds));
    const where = and(...conditions);
    return pageWithTotal(
      this.tx.db,
      agents,
      where,
      this.tx.db
        .select()
        .from(agents)
        .where(where)
        .orderBy(desc(agents.createdAt), desc(agents.id))
        .limit(page.limit)
        .offset(page.offset),
    );
  }

  async find(organizationId: string, id: string): Promise<AgentRow | undefined> {
    const [row] = await this.tx.db
      .select()
      .from(agents)
      .where(and(eq(agents.id, id), eq(agents.organizationId, organizationId)))
      .limit(1);
    return row;
  }

  /** Those of `ids` that are agents of the organization (a deleted agent's row is gone), in one query. */
  async existingIds(organizationId: string, ids: readonly string[]): Promise<string[]> {
    if (ids.length === 0) return [];
    const rows = await this.tx.db
      .select({ id: agents.id })
      .from(agents)
      .where(and(eq(agents.organizationId, organizationId), inArray(agents.id, [...ids])));
    return rows.map((row) => row.id);
  }

  /** The names of those of `ids` that are agents of the organization, in one query. */
  async names(organizationId: string, ids: readonly string[]): Promise<Map<string, string>> {
    if (ids.length === 0) return new Map();
    const rows = await this.tx.db
      .select({ id: agents.id, name: agents.name })
      .from(agents)
      .where(and(eq(agents.organizationId, organizationId), inArray(agents.id, [...ids])));
    return new Map(rows.map((row) => [row.id, row.name]));
  }

  /** The agent row, locked until the transaction ends (ownership check, then change). */
  async findForUpdate(organizationId: string, id: string): Promise<AgentRow | undefined> {
    const [row] = await this.tx.db
      .select()
      .from(agents)
      .where(and(eq(agents.id, id), eq(agents.organizationId, organizationId)))
      .limit(1)
      .for('update');
    return row;
  }

  async update(
    organizationId: string,
    id: string,
    patch: Partial<Pick<AgentRow, 'name' | 'description' | 'updatedAt'>>,
  ): Promise<AgentRow | undefined> {
    const [row] = await this.tx.db
      .update(agents)
      .set(patch)
      .where(and(eq(agents.id, id), eq(agents.organizationId, organizationId)))
      .returning();
    return row;
  }

  /** Deletes the agent row only: its traces are retained. */
  async delete(organizationId: string, id: string): Promise<boolean> {
    const rows = await this.tx.db
      .delete(agents)
      .where(and(eq(agents.id, id), eq(agents.organizationId, organizationId)))
      .returning({ id: agents.id });
    return rows.length > 0;
  }

  /**
   * Of the given (organization, agent) pairs, those whose agent exists, as `organizationId:id`: one statement for
   * a whole batch, for the pipelined transaction of trace ingestion.
   */
  liveAgentsQuery(pairs: readonly OrganizationScopedId[]): Query<Set<string>> {
    return {
      statements: [
        sql`select ${agents.organizationId} as organization_id, ${agents.id} as id from ${agents}
              where (${agents.organizationId}, ${agents.id}) in (
                select * from unnest(${sql.param(pairs.map((p) => p.organizationId))}::text[],
                                     ${sql.param(pairs.map((p) => p.id))}::text[]))`,
      ],
      read: ([rows]) => new Set(rows!.map((row) => `${String(row.organization_id)}:${String(row.id)}`)),
    };
  }
}
