import { Injectable } from '@nestjs/common';
import { and, count, desc, eq, inArray, isNull, max, sql, type SQL } from 'drizzle-orm';
import { type PageRequest, pageWithTotal, TransactionHost } from '#platform';
import type { ApiKeyScope } from '#identity';
// TODO(issue 10): cross-module table read (and write): agent keys are inserted, listed and revoked in identity's api_keys.
// eslint-disable-next-line no-restricted-imports -- issue 10: agent keys are rows of identity's api_keys table
import { apiKeys } from '../../../identity/src/api-keys/api-key.schema.js';
import { traces } from '../traces/trace.schema.js';
import { agents, type AgentRow } from './agent.schema.js';
import type { AgentTraceStats, AgentView } from './dto/agent.dto.js';

/** The live key of an agent: one per agent (creation and regeneration keep it so). */
const liveKeyOf = (organizationId: string) =>
  and(
    eq(apiKeys.agentId, agents.id),
    eq(apiKeys.organizationId, organizationId),
    eq(apiKeys.kind, 'agent'),
    isNull(apiKeys.revokedAt),
  );

const VIEW = {
  id: agents.id,
  organizationId: agents.organizationId,
  name: agents.name,
  description: agents.description,
  createdBy: agents.createdBy,
  createdAt: agents.createdAt,
  updatedAt: agents.updatedAt,
  keyPrefix: apiKeys.prefix,
};

export interface NewAgentKey {
  id: string;
  prefix: string;
  keyHash: string;
  name: string;
  scope: ApiKeyScope;
  createdBy: string | null;
  createdAt: Date;
}

/** Agents and their keys (`api_keys` rows of kind `agent`); workspace keys belong to the api-keys module. */
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
  ): Promise<{ rows: AgentView[]; total: number }> {
    if (agentIds !== null && agentIds.length === 0) return { rows: [], total: 0 };
    const conditions: SQL[] = [eq(agents.organizationId, organizationId)];
    if (agentIds !== null) conditions.push(inArray(agents.id, agentIds));
    const where = and(...conditions);
    return pageWithTotal(
      this.tx.db,
      agents,
      where,
      this.tx.db
        .select(VIEW)
        .from(agents)
        .leftJoin(apiKeys, liveKeyOf(organizationId))
        .where(where)
        .orderBy(desc(agents.createdAt), desc(agents.id))
        .limit(page.limit)
        .offset(page.offset),
    );
  }

  async find(organizationId: string, id: string): Promise<AgentView | undefined> {
    const [row] = await this.tx.db
      .select(VIEW)
      .from(agents)
      .leftJoin(apiKeys, liveKeyOf(organizationId))
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

  async insertKey(organizationId: string, agentId: string, key: NewAgentKey): Promise<void> {
    await this.tx.db.insert(apiKeys).values({ ...key, organizationId, agentId, kind: 'agent' });
  }

  /** Revokes the agent's live keys at once; returns their prefixes, hashes and scopes. */
  async revokeKeys(
    organizationId: string,
    agentId: string,
    at: Date,
  ): Promise<{ prefix: string; keyHash: string; scope: ApiKeyScope }[]> {
    return this.tx.db
      .update(apiKeys)
      .set({ revokedAt: at })
      .where(
        and(
          eq(apiKeys.organizationId, organizationId),
          eq(apiKeys.agentId, agentId),
          eq(apiKeys.kind, 'agent'),
          isNull(apiKeys.revokedAt),
        ),
      )
      .returning({ prefix: apiKeys.prefix, keyHash: apiKeys.keyHash, scope: apiKeys.scope });
  }

  /** Keeps the key's display name in step with the agent's (api_keys.name holds at most 120 characters). */
  async renameKeys(organizationId: string, agentId: string, name: string): Promise<void> {
    await this.tx.db
      .update(apiKeys)
      .set({ name })
      .where(
        and(
          eq(apiKeys.organizationId, organizationId),
          eq(apiKeys.agentId, agentId),
          eq(apiKeys.kind, 'agent'),
          isNull(apiKeys.revokedAt),
        ),
      );
  }

  /** Counts, mean confidence and last trace of one agent in one aggregate (index traces_org_agent_created_idx). */
  async traceStats(organizationId: string, agentId: string): Promise<AgentTraceStats> {
    const countWhere = (condition: SQL) => sql<number>`count(*) filter (where ${condition})`.mapWith(Number);
    const [row] = await this.tx.db
      .select({
        total: count(),
        approved: countWhere(eq(traces.status, 'approved')),
        flagged: countWhere(eq(traces.status, 'flagged')),
        blocked: countWhere(eq(traces.status, 'blocked')),
        success: countWhere(eq(traces.status, 'success')),
        averageConfidence: sql<number | null>`avg(${traces.confidence})`.mapWith(Number),
        humanOverrides: countWhere(eq(traces.humanOverride, true)),
        lastTraceAt: max(traces.createdAt),
      })
      .from(traces)
      .where(and(eq(traces.organizationId, organizationId), eq(traces.agentId, agentId)));
    return row!;
  }
}
