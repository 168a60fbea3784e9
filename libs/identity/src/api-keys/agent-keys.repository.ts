import { Injectable } from '@nestjs/common';
import { and, eq, inArray, isNull, sql } from 'drizzle-orm';
import { type Plan, type Query, TransactionHost } from '#platform';
import { organizationPlanOf } from '../organizations/organization.queries.js';
import { apiKeys, type ApiKeyScope } from './api-key.schema.js';

export interface NewAgentKey {
  id: string;
  prefix: string;
  keyHash: string;
  name: string;
  scope: ApiKeyScope;
  createdBy: string | null;
  createdAt: Date;
}

/** What the agent-key resolver needs about a presented key, in one indexed lookup. */
export interface AgentKeyPrincipal {
  id: string;
  organizationId: string;
  agentId: string | null;
  keyHash: string;
  plan: Plan;
}

export interface RevokedAgentKey {
  prefix: string;
  keyHash: string;
  scope: ApiKeyScope;
}

/** An (organization, id) pair, as the batch queries of trace ingestion take them. */
export interface OrganizationScopedId {
  organizationId: string;
  id: string;
}

/**
 * The `api_keys` rows of kind `agent`, for the agents module (governance), which owns the agents they are bound to
 * but not the table; and the liveness of any key, for trace ingestion. Every method is scoped by organization,
 * except the lookup by hash, which is how a presented key finds its organization.
 */
@Injectable()
export class AgentKeysRepository {
  constructor(private readonly tx: TransactionHost) {}

  async insert(organizationId: string, agentId: string, key: NewAgentKey): Promise<void> {
    await this.tx.db.insert(apiKeys).values({ ...key, organizationId, agentId, kind: 'agent' });
  }

  /** Revokes the agent's live keys at once; returns their prefixes, hashes and scopes. */
  revokeForAgent(organizationId: string, agentId: string, at: Date): Promise<RevokedAgentKey[]> {
    return this.tx.db
      .update(apiKeys)
      .set({ revokedAt: at })
      .where(this.liveOf(organizationId, [agentId]))
      .returning({ prefix: apiKeys.prefix, keyHash: apiKeys.keyHash, scope: apiKeys.scope });
  }

  /** Keeps the key's display name in step with the agent's (api_keys.name holds at most 120 characters). */
  async renameForAgent(organizationId: string, agentId: string, name: string): Promise<void> {
    await this.tx.db
      .update(apiKeys)
      .set({ name })
      .where(this.liveOf(organizationId, [agentId]));
  }

  /** The prefix of each agent's live key (one per agent), for listings. */
  async livePrefixes(organizationId: string, agentIds: readonly string[]): Promise<Map<string, string>> {
    if (agentIds.length === 0) return new Map();
    const rows = await this.tx.db
      .select({ agentId: apiKeys.agentId, prefix: apiKeys.prefix })
      .from(apiKeys)
      .where(this.liveOf(organizationId, agentIds));
    return new Map(rows.map((row) => [row.agentId!, row.prefix]));
  }

  /** The live agent key with this hash and its organization's plan (unique index on the hash). */
  async findPrincipalByHash(keyHash: string): Promise<AgentKeyPrincipal | undefined> {
    const [row] = await this.tx.db
      .select({
        id: apiKeys.id,
        organizationId: apiKeys.organizationId,
        agentId: apiKeys.agentId,
        keyHash: apiKeys.keyHash,
        plan: organizationPlanOf(apiKeys.organizationId),
      })
      .from(apiKeys)
      .where(and(eq(apiKeys.keyHash, keyHash), eq(apiKeys.kind, 'agent'), isNull(apiKeys.revokedAt)))
      .limit(1);
    // A key whose organization is gone names no one.
    return row?.plan ? { ...row, plan: row.plan } : undefined;
  }

  /**
   * Of the given (organization, key id) pairs, of keys of any kind, those not revoked and whose organization is not
   * deleted, as `organizationId:id`: one statement for a whole batch, for the pipelined transaction of trace
   * ingestion.
   */
  liveKeysQuery(pairs: readonly OrganizationScopedId[]): Query<Set<string>> {
    return {
      statements: [
        sql`select ${apiKeys.organizationId} as organization_id, ${apiKeys.id} as id from ${apiKeys}
              where (${apiKeys.organizationId}, ${apiKeys.id}) in (
                select * from unnest(${sql.param(pairs.map((p) => p.organizationId))}::text[],
                                     ${sql.param(pairs.map((p) => p.id))}::text[]))
                and ${apiKeys.revokedAt} is null
                and ${organizationPlanOf(apiKeys.organizationId)} is not null`,
      ],
      read: ([rows]) => new Set(rows!.map((row) => `${String(row.organization_id)}:${String(row.id)}`)),
    };
  }

  private liveOf(organizationId: string, agentIds: readonly string[]) {
    return and(
      eq(apiKeys.organizationId, organizationId),
      agentIds.length === 1 ? eq(apiKeys.agentId, agentIds[0]!) : inArray(apiKeys.agentId, [...agentIds]),
      eq(apiKeys.kind, 'agent'),
      isNull(apiKeys.revokedAt),
    );
  }
}
