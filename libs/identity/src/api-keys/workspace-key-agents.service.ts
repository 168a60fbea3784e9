import { Injectable } from '@nestjs/common';
import type { AuditTarget } from '#platform';
import { auditMetadata, normaliseScope } from './api-keys.service.js';
import { ApiKeysRepository } from './api-keys.repository.js';
import { toApiKeyScopeResponse } from './dto/api-key.dto.js';

/** An audit entry a key's change calls for, for a caller that writes it later in its transaction. */
export interface KeyAuditChange {
  eventType: string;
  target: AuditTarget;
  metadata: Record<string, unknown>;
}

/**
 * The agent ids in workspace key scopes, for the agents module (governance): deleting an agent removes its id from
 * them. Apart from ApiKeysService, which checks ids through the AgentDirectory that the agents module provides, so
 * that the agents module can depend on this without a cycle.
 */
@Injectable()
export class WorkspaceKeyAgents {
  constructor(private readonly repo: ApiKeysRepository) {}

  /**
   * Removes a deleted agent's id from the scopes of the organization's live workspace keys, inside the agent's
   * deletion, and returns the audit entries to write (`auth.key_updated` with `reason: 'agent_deleted'`) once the
   * caller holds every row lock it needs. A key scoped to that agent alone is revoked instead (`auth.key_revoked`):
   * a scope without agent ids means every agent, and the key must not gain the access the deletion took away. The
   * caller takes the organization's write lock before it commits, as a revocation does, against trace ingestion.
   */
  async detachAgent(organizationId: string, agentId: string, at: Date): Promise<KeyAuditChange[]> {
    const keys = await this.repo.findNamingAgentForUpdate(organizationId, agentId);
    const changes: KeyAuditChange[] = [];
    for (const key of keys) {
      const remaining = (key.scope.agentIds ?? []).filter((id) => id !== agentId);
      const reason = { reason: 'agent_deleted', agentId };
      if (remaining.length === 0) {
        const row = (await this.repo.revoke(organizationId, key.id, at))!;
        changes.push({
          eventType: 'auth.key_revoked',
          target: { type: 'api_key', id: row.id },
          metadata: { ...auditMetadata(row), ...reason },
        });
        continue;
      }
      const scope = normaliseScope(remaining, key.scope.readOnly);
      const row = (await this.repo.update(organizationId, key.id, { scope }))!;
      changes.push({
        eventType: 'auth.key_updated',
        target: { type: 'api_key', id: row.id },
        metadata: {
          ...auditMetadata(row),
          changes: { scope: { from: toApiKeyScopeResponse(key.scope), to: toApiKeyScopeResponse(scope) } },
          ...reason,
        },
      });
    }
    return changes;
  }
}
