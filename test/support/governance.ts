import { apiKeys } from '../../libs/identity/src/api-keys/api-key.schema.js';
import { mintAgentKey } from '../../libs/governance/src/agents/agent-key.js';
import { agents } from '../../libs/governance/src/agents/agent.schema.js';
import type { PolicyCondition } from '../../libs/governance/src/policies/engine/index.js';
import { policies } from '../../libs/governance/src/policies/policy.schema.js';
import { newId } from '#platform';
import type { TestContext } from './app.js';

export interface TestAgent {
  id: string;
  key: string;
}

/**
 * Inserts an agent and its `svc_agent_` key directly (what POST /agents does), for suites that need agents
 * without going through the agents API.
 */
export async function insertAgent(
  ctx: TestContext,
  organizationId: string,
  name = 'Agent',
): Promise<TestAgent> {
  const now = ctx.clock.now();
  const id = newId(now.getTime());
  await ctx.db.db
    .insert(agents)
    .values({ id, organizationId, name, description: null, createdBy: null, createdAt: now, updatedAt: now });
  const minted = mintAgentKey();
  await ctx.db.db.insert(apiKeys).values({
    id: newId(now.getTime()),
    organizationId,
    kind: 'agent',
    agentId: id,
    name: `${name} key`,
    prefix: minted.prefix,
    keyHash: minted.keyHash,
    scope: { agentIds: [id] },
    createdAt: now,
  });
  return { id, key: minted.key };
}

export interface TestPolicy {
  name?: string;
  outcome: 'block' | 'flag';
  conditions: PolicyCondition[];
  agentIds?: string[];
  match?: 'all' | 'any';
}

/** Inserts an active policy directly (the policies API is another module). */
export async function insertPolicy(
  ctx: TestContext,
  organizationId: string,
  policy: TestPolicy,
): Promise<string> {
  const now = ctx.clock.now();
  const id = newId(now.getTime());
  await ctx.db.db.insert(policies).values({
    id,
    organizationId,
    name: policy.name ?? `${policy.outcome} policy`,
    description: null,
    outcome: policy.outcome,
    conditions: policy.conditions,
    match: policy.match ?? 'all',
    agentIds: policy.agentIds ?? [],
    priority: 100,
    isActive: true,
    createdAt: now,
    updatedAt: now,
  });
  return id;
}
