import { Injectable } from '@nestjs/common';
import {
  type Actor,
  AgentDirectory,
  AppError,
  assertAgentsOf,
  AuditLog,
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
import type { ApiKeyScope } from './api-key.schema.js';
import { ApiKeysRepository } from './api-keys.repository.js';
import {
  type ApiKeyDto,
  type ApiKeyScopeInputDto,
  type ApiKeyView,
  type CreateApiKeyDto,
  type CreatedApiKeyDto,
  toApiKeyResponse,
  toApiKeyScopeResponse,
  toCreatedApiKeyResponse,
  type UpdateApiKeyDto,
} from './dto/api-key.dto.js';
import { mintWorkspaceKey } from './workspace-key.js';

const LIST_PAGE = { limit: 50, max: 100 };

/** The stored form of a scope: `agentIds` only when it restricts, without duplicates; `readOnly` always. */
export function normaliseScope(
  agentIds: string[] | null | undefined,
  readOnly: boolean | undefined,
): ApiKeyScope {
  const scope: ApiKeyScope = { readOnly: readOnly === true };
  if (agentIds?.length) scope.agentIds = [...new Set(agentIds)];
  return scope;
}

function mergeScope(current: ApiKeyScope, patch: ApiKeyScopeInputDto): ApiKeyScope {
  return normaliseScope(
    patch.agentIds === undefined ? current.agentIds : patch.agentIds,
    patch.readOnly ?? current.readOnly,
  );
}

function sameScope(a: ApiKeyScope, b: ApiKeyScope): boolean {
  return JSON.stringify(toApiKeyScopeResponse(a)) === JSON.stringify(toApiKeyScopeResponse(b));
}

/** What audit entries record about a key: never the key or its hash. */
export function auditMetadata(row: ApiKeyView): Record<string, unknown> {
  return { name: row.name, prefix: row.prefix, scope: toApiKeyScopeResponse(row.scope) };
}

/** Workspace API keys (svc_live_): minted once, stored as SHA-256, listed by prefix, revoked at once. */
@Injectable()
export class ApiKeysService {
  constructor(
    private readonly repo: ApiKeysRepository,
    private readonly audit: AuditLog,
    private readonly tx: TransactionHost,
    private readonly clock: Clock,
    private readonly agents: AgentDirectory,
  ) {}

  create(actor: Actor, dto: CreateApiKeyDto, meta: RequestMeta): Promise<CreatedApiKeyDto> {
    const minted = mintWorkspaceKey();
    return this.tx.run(async () => {
      if (dto.scope?.agentIds)
        await assertAgentsOf(this.agents, actor.organizationId, dto.scope.agentIds, 'scope.agentIds');
      const now = this.clock.now();
      const row = await this.repo.insert({
        id: newId(now.getTime()),
        organizationId: actor.organizationId,
        name: dto.name,
        prefix: minted.prefix,
        keyHash: minted.keyHash,
        scope: normaliseScope(dto.scope?.agentIds, dto.scope?.readOnly),
        createdBy: actor.userId,
        createdAt: now,
      });
      await this.audit.record(
        actor,
        'auth.key_created',
        { type: 'api_key', id: row.id },
        auditMetadata(row),
        meta,
      );
      return toCreatedApiKeyResponse(row, minted.key);
    });
  }

  async list(actor: Actor, query: PaginationQueryDto): Promise<Page<ApiKeyDto>> {
    const page = pageRequest(query, LIST_PAGE);
    const { rows, total } = await this.repo.list(actor.organizationId, page);
    return toPage(rows.map(toApiKeyResponse), total, page);
  }

  update(actor: Actor, id: string, dto: UpdateApiKeyDto, meta: RequestMeta): Promise<ApiKeyDto> {
    if (!isObjectId(id)) return Promise.reject(AppError.notFound('API key'));
    return this.tx.run(async () => {
      const before = await this.repo.findForUpdate(actor.organizationId, id);
      if (!before) throw AppError.notFound('API key');
      // Every id sent is checked, also one the scope already holds: the answer depends on the request alone.
      if (dto.scope?.agentIds)
        await assertAgentsOf(this.agents, actor.organizationId, dto.scope.agentIds, 'scope.agentIds');
      const changes: Record<string, { from: unknown; to: unknown }> = {};
      const patch: { name?: string; scope?: ApiKeyScope } = {};
      if (dto.name !== undefined && dto.name !== before.name) {
        patch.name = dto.name;
        changes.name = { from: before.name, to: dto.name };
      }
      if (dto.scope !== undefined) {
        const scope = mergeScope(before.scope, dto.scope);
        if (!sameScope(scope, before.scope)) {
          patch.scope = scope;
          changes.scope = { from: toApiKeyScopeResponse(before.scope), to: toApiKeyScopeResponse(scope) };
        }
      }
      if (Object.keys(changes).length === 0) return toApiKeyResponse(before);
      const row = (await this.repo.update(actor.organizationId, id, patch))!;
      await this.audit.record(
        actor,
        'auth.key_updated',
        { type: 'api_key', id: row.id },
        { ...auditMetadata(row), changes },
        meta,
      );
      return toApiKeyResponse(row);
    });
  }

  revoke(actor: Actor, id: string, meta: RequestMeta): Promise<DeletedDto> {
    if (!isObjectId(id)) return Promise.reject(AppError.notFound('API key'));
    return this.tx.run(async () => {
      const row = await this.repo.revoke(actor.organizationId, id, this.clock.now());
      if (!row) throw AppError.notFound('API key');
      // The organization's write lock, which trace ingestion holds while it re-checks that a trace's key is live: a
      // batch that read this key as live commits before the revocation, and any later batch waits for the commit and
      // sees the key revoked. (The audit append takes the same lock; it is named here so that the guarantee does not
      // hang on the entry.) Taken after the key's row lock, in the order every audited change takes them.
      await this.audit.lockOrganization(actor.organizationId);
      await this.audit.record(
        actor,
        'auth.key_revoked',
        { type: 'api_key', id: row.id },
        auditMetadata(row),
        meta,
      );
      return { id: row.id, deleted: true };
    });
  }
}
