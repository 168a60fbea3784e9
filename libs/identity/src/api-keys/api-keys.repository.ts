import { Injectable } from '@nestjs/common';
import { and, asc, desc, eq, isNull, lt, or, sql } from 'drizzle-orm';
import { type PageRequest, type Plan, pageWithTotal, TransactionHost } from '#platform';
import { creatorIsActiveMember, organizationPlanOf } from '../organizations/organization.queries.js';
import { apiKeys, type ApiKeyRow, type ApiKeyScope } from './api-key.schema.js';
import type { ApiKeyView } from './dto/api-key.dto.js';

/** What the key resolver needs about a presented key, in one indexed lookup. */
export interface WorkspaceKeyPrincipal {
  id: string;
  organizationId: string;
  keyHash: string;
  scope: ApiKeyScope;
  createdBy: string | null;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
  plan: Plan;
}

const VIEW = {
  id: apiKeys.id,
  name: apiKeys.name,
  prefix: apiKeys.prefix,
  scope: apiKeys.scope,
  createdAt: apiKeys.createdAt,
  lastUsedAt: apiKeys.lastUsedAt,
};

/** Workspace keys (kind `workspace`) of the `api_keys` table; agent keys belong to the agents module. */
@Injectable()
export class ApiKeysRepository {
  constructor(private readonly tx: TransactionHost) {}

  async insert(row: Omit<typeof apiKeys.$inferInsert, 'kind' | 'agentId'>): Promise<ApiKeyView> {
    const [inserted] = await this.tx.db
      .insert(apiKeys)
      .values({ ...row, kind: 'workspace', agentId: null })
      .returning(VIEW);
    return inserted!;
  }

  /** Live workspace keys of the organization, newest first. */
  async list(organizationId: string, page: PageRequest): Promise<{ rows: ApiKeyView[]; total: number }> {
    const where = this.live(organizationId);
    return pageWithTotal(
      this.tx.db,
      apiKeys,
      where,
      this.tx.db
        .select(VIEW)
        .from(apiKeys)
        .where(where)
        .orderBy(desc(apiKeys.createdAt), desc(apiKeys.id))
        .limit(page.limit)
        .offset(page.offset),
    );
  }

  /** A live workspace key of the organization, locked until the transaction ends (read-modify-write of scope). */
  async findForUpdate(organizationId: string, id: string): Promise<ApiKeyView | undefined> {
    const [row] = await this.tx.db
      .select(VIEW)
      .from(apiKeys)
      .where(and(eq(apiKeys.id, id), this.live(organizationId)))
      .limit(1)
      .for('update');
    return row;
  }

  /**
   * The organization's live workspace keys whose scope names the agent, locked until the transaction ends, in id
   * order (deleting the agent rewrites their scopes).
   */
  async findNamingAgentForUpdate(organizationId: string, agentId: string): Promise<ApiKeyView[]> {
    return this.tx.db
      .select(VIEW)
      .from(apiKeys)
      .where(
        and(
          this.live(organizationId),
          sql`${apiKeys.scope} -> 'agentIds' @> ${JSON.stringify([agentId])}::jsonb`,
        ),
      )
      .orderBy(asc(apiKeys.id))
      .for('update');
  }

  async update(
    organizationId: string,
    id: string,
    patch: Partial<Pick<ApiKeyRow, 'name' | 'scope'>>,
  ): Promise<ApiKeyView | undefined> {
    const [row] = await this.tx.db
      .update(apiKeys)
      .set(patch)
      .where(and(eq(apiKeys.id, id), this.live(organizationId)))
      .returning(VIEW);
    return row;
  }

  /** Marks a live key revoked; undefined when there is none (unknown, already revoked, other organization). */
  async revoke(organizationId: string, id: string, at: Date): Promise<ApiKeyView | undefined> {
    const [row] = await this.tx.db
      .update(apiKeys)
      .set({ revokedAt: at })
      .where(and(eq(apiKeys.id, id), this.live(organizationId)))
      .returning(VIEW);
    return row;
  }

  /** The workspace key with this hash and its organization's plan (unique index on the hash). */
  async findPrincipalByHash(keyHash: string): Promise<WorkspaceKeyPrincipal | undefined> {
    const [row] = await this.tx.db
      .select({
        id: apiKeys.id,
        organizationId: apiKeys.organizationId,
        keyHash: apiKeys.keyHash,
        scope: apiKeys.scope,
        createdBy: apiKeys.createdBy,
        lastUsedAt: apiKeys.lastUsedAt,
        revokedAt: apiKeys.revokedAt,
        plan: organizationPlanOf(apiKeys.organizationId),
      })
      .from(apiKeys)
      .where(
        and(
          eq(apiKeys.keyHash, keyHash),
          eq(apiKeys.kind, 'workspace'),
          // A key acts for its creator: it works while the creator's membership is active, and stops when they
          // are suspended, deactivated (SCIM) or removed.
          or(isNull(apiKeys.createdBy), creatorIsActiveMember(apiKeys.organizationId, apiKeys.createdBy)),
        ),
      )
      .limit(1);
    // A key whose organization is gone names no one.
    return row?.plan ? { ...row, plan: row.plan } : undefined;
  }

  /**
   * Records a use unless one was recorded after `staleBefore`: the condition keeps replicas (and bursts) from
   * rewriting the row on every request.
   */
  async touchLastUsed(organizationId: string, id: string, at: Date, staleBefore: Date): Promise<void> {
    await this.tx.db
      .update(apiKeys)
      .set({ lastUsedAt: at })
      .where(
        and(
          eq(apiKeys.id, id),
          eq(apiKeys.organizationId, organizationId),
          or(isNull(apiKeys.lastUsedAt), lt(apiKeys.lastUsedAt, staleBefore)),
        ),
      );
  }

  private live(organizationId: string) {
    return and(
      eq(apiKeys.organizationId, organizationId),
      eq(apiKeys.kind, 'workspace'),
      isNull(apiKeys.revokedAt),
    );
  }
}
