import { Injectable } from '@nestjs/common';
import { and, eq, isNull } from 'drizzle-orm';
import {
  type Actor,
  type ApiKeyResolver,
  safeEqual,
  sha256Hex,
  TransactionHost,
} from '../../../platform/src/index.js';
import { apiKeys } from '../../../identity/src/api-keys/api-key.schema.js';
import { organizations } from '../../../identity/src/organizations/organization.schema.js';
import { AGENT_KEY_PREFIX, isWellFormedAgentKey } from './agent-key.js';

/**
 * Resolves `svc_agent_` keys: one indexed lookup by hash, joined with the organization for its plan. An agent
 * key is bound to its agent (the actor's agentId and scope) and is refused once revoked or regenerated.
 */
@Injectable()
export class AgentKeyResolver implements ApiKeyResolver {
  readonly prefix = AGENT_KEY_PREFIX;

  constructor(private readonly tx: TransactionHost) {}

  async resolveKey(key: string): Promise<Actor | null> {
    if (!isWellFormedAgentKey(key)) return null;
    const keyHash = sha256Hex(key);
    const [row] = await this.tx.db
      .select({
        id: apiKeys.id,
        keyHash: apiKeys.keyHash,
        organizationId: apiKeys.organizationId,
        agentId: apiKeys.agentId,
        plan: organizations.plan,
      })
      .from(apiKeys)
      .innerJoin(organizations, eq(organizations.id, apiKeys.organizationId))
      .where(and(eq(apiKeys.keyHash, keyHash), eq(apiKeys.kind, 'agent'), isNull(apiKeys.revokedAt)))
      .limit(1);
    if (!row || !row.agentId || !safeEqual(row.keyHash, keyHash)) return null;
    return {
      type: 'agent',
      credential: 'agentKey',
      organizationId: row.organizationId,
      plan: row.plan,
      userId: null,
      email: null,
      role: null,
      keyId: row.id,
      agentId: row.agentId,
      scope: { agentIds: [row.agentId] },
    };
  }
}
