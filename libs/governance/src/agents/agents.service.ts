import { Injectable } from '@nestjs/common';
import {
  type Actor,
  AgentDirectory,
  agentScopeOf,
  AppError,
  AuditLog,
  canAccessAgent,
  canEditOwnedResource,
  Clock,
  type DeletedDto,
  isObjectId,
  newId,
  type Page,
  type PaginationQueryDto,
  pageRequest,
  type RequestMeta,
  toPage,
  TransactionHost,
} from '#platform';
import { AgentKeysRepository, WorkspaceKeyAgents } from '#identity';
import type { AgentRow } from './agent.schema.js';
import { mintAgentKey } from './agent-key.js';
import { AgentKeyResolver } from './agent-key.resolver.js';
import { AgentReferencesPort } from './agent-references.js';
import { AgentTraceStatsPort } from './agent-trace-stats.js';
import { AgentsRepository } from './agents.repository.js';
import {
  type AgentDetailDto,
  type AgentDto,
  type AgentView,
  type CreateAgentDto,
  type CreatedAgentDto,
  type RegeneratedAgentKeyDto,
  toAgentDetailResponse,
  toAgentResponse,
  toCreatedAgentResponse,
  toRegeneratedAgentKeyResponse,
  type UpdateAgentDto,
} from './dto/agent.dto.js';

const LIST_PAGE = { limit: 50, max: 100 };
/** Length of `api_keys.name`; an agent name may be longer (200). */
const KEY_NAME_MAX_LENGTH = 120;

/** The stored description: blank or null means none. */
export function normaliseDescription(value: string | null | undefined): string | null {
  return value ? value : null;
}

export function keyNameFor(agentName: string): string {
  return agentName.slice(0, KEY_NAME_MAX_LENGTH);
}

/**
 * Agents of an organization and their `svc_agent_` keys. An agent's key scope is fixed at creation
 * (`{agentIds: [id]}`) and carried over on regeneration; the old key is revoked in the same transaction.
 */
@Injectable()
export class AgentsService implements AgentDirectory {
  constructor(
    private readonly repo: AgentsRepository,
    private readonly audit: AuditLog,
    private readonly tx: TransactionHost,
    private readonly clock: Clock,
    private readonly keys: AgentKeyResolver,
    private readonly agentKeys: AgentKeysRepository,
    private readonly traceStats: AgentTraceStatsPort,
    private readonly references: AgentReferencesPort,
    private readonly workspaceKeys: WorkspaceKeyAgents,
  ) {}

  async list(actor: Actor, query: PaginationQueryDto): Promise<Page<AgentDto>> {
    const page = pageRequest(query, LIST_PAGE);
    const { rows, total } = await this.repo.list(actor.organizationId, agentScopeOf(actor), page);
    const prefixes = await this.agentKeys.livePrefixes(
      actor.organizationId,
      rows.map((row) => row.id),
    );
    return toPage(
      rows.map((row) => toAgentResponse({ ...row, keyPrefix: prefixes.get(row.id) ?? null })),
      total,
      page,
    );
  }

  /**
   * An agent the caller may not see (another organization, outside a key's scope, another agent's key) is
   * reported as absent: 404, so that ids of other agents are not disclosed.
   */
  async get(actor: Actor, id: string): Promise<AgentDetailDto> {
    if (!isObjectId(id) || !canAccessAgent(actor, id)) throw AppError.notFound('Agent');
    const row = await this.findView(actor.organizationId, id);
    if (!row) throw AppError.notFound('Agent');
    const stats = await this.traceStats.statsOf(actor.organizationId, id);
    return toAgentDetailResponse(row, stats);
  }

  /** AgentDirectory: those of `ids` that are not agents of the organization (unknown, deleted, another's). */
  async unknownIds(organizationId: string, ids: readonly string[]): Promise<string[]> {
    const known = new Set(await this.repo.existingIds(organizationId, ids));
    return [...new Set(ids)].filter((id) => !known.has(id));
  }

  create(actor: Actor, dto: CreateAgentDto, meta: RequestMeta): Promise<CreatedAgentDto> {
    const minted = mintAgentKey();
    return this.tx.run(async () => {
      const now = this.clock.now();
      const agent = await this.repo.insert({
        id: newId(now.getTime()),
        organizationId: actor.organizationId,
        name: dto.name,
        description: normaliseDescription(dto.description),
        createdBy: actor.userId,
        createdAt: now,
        updatedAt: now,
      });
      await this.agentKeys.insert(actor.organizationId, agent.id, {
        id: newId(now.getTime()),
        name: keyNameFor(agent.name),
        prefix: minted.prefix,
        keyHash: minted.keyHash,
        scope: { agentIds: [agent.id] },
        createdBy: actor.userId,
        createdAt: now,
      });
      await this.audit.record(
        actor,
        'agent.created',
        { type: 'agent', id: agent.id },
        { name: agent.name, keyPrefix: minted.prefix },
        meta,
      );
      return toCreatedAgentResponse({ ...agent, keyPrefix: minted.prefix }, minted.key);
    });
  }

  update(actor: Actor, id: string, dto: UpdateAgentDto, meta: RequestMeta): Promise<AgentDto> {
    return this.tx.run(async () => {
      const before = await this.findEditable(actor, id);
      const changes: Record<string, { from: unknown; to: unknown }> = {};
      const patch: { name?: string; description?: string | null } = {};
      if (dto.name !== undefined && dto.name !== before.name) {
        patch.name = dto.name;
        changes.name = { from: before.name, to: dto.name };
      }
      if (dto.description !== undefined) {
        const description = normaliseDescription(dto.description);
        if (description !== before.description) {
          patch.description = description;
          changes.description = { from: before.description, to: description };
        }
      }
      if (Object.keys(changes).length > 0) {
        await this.repo.update(actor.organizationId, id, { ...patch, updatedAt: this.clock.now() });
        if (patch.name !== undefined)
          await this.agentKeys.renameForAgent(actor.organizationId, id, keyNameFor(patch.name));
        await this.audit.record(actor, 'agent.updated', { type: 'agent', id: before.id }, { changes }, meta);
      }
      const row = await this.findView(actor.organizationId, id);
      return toAgentResponse(row!);
    });
  }

  /**
   * Deletes the agent and revokes its key in one transaction; its traces are retained. Its id leaves the
   * organization's policies and workspace key scopes in the same transaction (a list read back and sent again must
   * not name an agent that is gone), each changed record audited on its own after the agent's entry.
   */
  remove(actor: Actor, id: string, meta: RequestMeta): Promise<DeletedDto> {
    return this.tx.run(async () => {
      const organizationId = actor.organizationId;
      const agent = await this.findEditable(actor, id);
      const now = this.clock.now();
      const revoked = await this.agentKeys.revokeForAgent(organizationId, id, now);
      await this.keys.announceRevoked(revoked.map((key) => key.keyHash));
      await this.repo.delete(organizationId, id);
      // Every row lock before the organization's write lock, as in every audited change.
      const detached = [
        ...(await this.references.detach(organizationId, id, now)),
        ...(await this.workspaceKeys.detachAgent(organizationId, id, now)),
      ];
      await this.lockAgainstIngestion(organizationId);
      await this.audit.record(
        actor,
        'agent.deleted',
        { type: 'agent', id: agent.id },
        {
          name: agent.name,
          revokedKeyPrefixes: revoked.map((key) => key.prefix),
          detachedFrom: detached.map((change) => ({ type: change.target.type, id: change.target.id })),
        },
        meta,
      );
      for (const change of detached) {
        await this.audit.record(actor, change.eventType, change.target, change.metadata, meta);
      }
      return { id, deleted: true };
    });
  }

  /** A new key with the scope of the old one; the old key is refused from the commit on. */
  regenerateKey(actor: Actor, id: string, meta: RequestMeta): Promise<RegeneratedAgentKeyDto> {
    const minted = mintAgentKey();
    return this.tx.run(async () => {
      const agent = await this.findEditable(actor, id);
      const now = this.clock.now();
      const revoked = await this.agentKeys.revokeForAgent(actor.organizationId, id, now);
      await this.keys.announceRevoked(revoked.map((key) => key.keyHash));
      await this.agentKeys.insert(actor.organizationId, id, {
        id: newId(now.getTime()),
        name: keyNameFor(agent.name),
        prefix: minted.prefix,
        keyHash: minted.keyHash,
        scope: revoked[0]?.scope ?? { agentIds: [id] },
        createdBy: actor.userId,
        createdAt: now,
      });
      await this.lockAgainstIngestion(actor.organizationId);
      await this.audit.record(
        actor,
        'agent.key_regenerated',
        { type: 'agent', id: agent.id },
        { keyPrefix: minted.prefix, revokedKeyPrefixes: revoked.map((key) => key.prefix) },
        meta,
      );
      return toRegeneratedAgentKeyResponse(minted.key);
    });
  }

  /** The agent with the prefix of its live key. */
  private async findView(organizationId: string, id: string): Promise<AgentView | undefined> {
    const row = await this.repo.find(organizationId, id);
    if (!row) return undefined;
    const prefixes = await this.agentKeys.livePrefixes(organizationId, [id]);
    return { ...row, keyPrefix: prefixes.get(id) ?? null };
  }

  /** The agent, locked, if it exists in the caller's organization (404) and the caller may edit it (403). */
  private async findEditable(actor: Actor, id: string): Promise<AgentRow> {
    if (!isObjectId(id)) throw AppError.notFound('Agent');
    const agent = await this.repo.findForUpdate(actor.organizationId, id);
    if (!agent) throw AppError.notFound('Agent');
    if (!canEditOwnedResource(actor, agent.createdBy)) {
      throw AppError.forbidden('Members may change only the agents they created');
    }
    return agent;
  }

  /**
   * Takes the organization's write lock, which trace ingestion holds while it re-checks that a trace's agent and
   * key are live: a batch that read the agent or key as live commits before this transaction, and any later batch
   * waits for its commit and sees the agent deleted or the key revoked. (The audit append below takes the same
   * lock; it is named here so that the guarantee does not hang on the entry.) It is taken after the row locks, in
   * the order every audited change takes them, so that it cannot deadlock with them.
   */
  private lockAgainstIngestion(organizationId: string): Promise<void> {
    return this.audit.lockOrganization(organizationId);
  }
}
