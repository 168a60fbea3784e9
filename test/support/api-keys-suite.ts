import { createHash } from 'node:crypto';
import { Controller, Get, Module, Param, Post } from '@nestjs/common';
import { eq } from 'drizzle-orm';
import { expect } from 'vitest';
import { apiKeys } from '../../libs/identity/src/api-keys/api-key.schema.js';
import {
  Access,
  type Actor,
  agentScopeOf,
  AppError,
  canAccessAgent,
  CurrentActor,
  Permission,
} from '#platform';
import { type Registered, TestContext } from './app.js';

export const KEYS = '/api/v1/auth/keys';
export const PROBE_READ = '/api/v1/test-workspace-keys/read';
export const PROBE_WRITE = '/api/v1/test-workspace-keys/write';
/** Agents of the owner's organization: a scope may name only those. */
export const AGENT_COUNT = 100;

/** Routes that accept workspace keys, so that a minted key can be exercised end to end. */
@Controller('test-workspace-keys')
class WorkspaceKeyProbeController {
  @Get('read')
  @Access({ via: ['jwt', 'workspaceKey'], roles: Permission.read })
  read(@CurrentActor() actor: Actor) {
    return actor;
  }

  @Post('write')
  @Access({ via: ['jwt', 'workspaceKey'], roles: Permission.editAgents })
  write(@CurrentActor() actor: Actor) {
    return { credential: actor.credential, keyId: actor.keyId ?? null };
  }

  /** What agent-scoped routes (traces, agents) do with the caller's scope. */
  @Get('agents/:agentId')
  @Access({ via: ['jwt', 'workspaceKey'], roles: Permission.read })
  agent(@CurrentActor() actor: Actor, @Param('agentId') agentId: string) {
    if (!canAccessAgent(actor, agentId)) throw AppError.forbidden('This API key is not scoped to that agent');
    return { agentId, scope: agentScopeOf(actor) };
  }
}

@Module({ controllers: [WorkspaceKeyProbeController] })
export class WorkspaceKeyProbeModule {}

export interface CreatedKey {
  id: string;
  name: string;
  key: string;
  prefix: string;
  scope: { agentIds: string[] | null; readOnly: boolean };
  createdAt: string;
}

export const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

export interface ApiKeyFixture {
  ctx: TestContext;
  owner: Registered;
  other: Registered;
  /** AGENT_COUNT agents of the owner's organization, in creation order. */
  ownerAgents: string[];
}

/** The workspace-key suites' application (with the probe routes), two organizations and the owner's agents. */
export async function apiKeyFixture(): Promise<ApiKeyFixture> {
  const ctx = await TestContext.create({ imports: [WorkspaceKeyProbeModule] });
  const owner = await ctx.register({ organizationName: 'Key Owners' });
  const other = await ctx.register({ organizationName: 'Other Org' });
  const ownerAgents: string[] = [];
  for (let n = 0; n < AGENT_COUNT; n += 1) {
    ownerAgents.push((await ctx.newAgent(owner.organization.id, `Agent ${n}`)).id);
  }
  return { ctx, owner, other, ownerAgents };
}

/** The helpers of the workspace-key suites, on the suite's context and owner (both made in beforeAll). */
export function apiKeyHelpers(context: () => TestContext, owner: () => Registered) {
  async function createKey(body: unknown = { name: 'CI' }, token = owner().token): Promise<CreatedKey> {
    const res = await context().post(KEYS, { token, body });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().data as CreatedKey;
  }

  async function storedRow(id: string) {
    const [row] = await context().db.db.select().from(apiKeys).where(eq(apiKeys.id, id));
    return row!;
  }

  async function listKeys(token = owner().token) {
    const res = await context().get(KEYS, { token, query: { limit: '100' } });
    expect(res.statusCode, res.body).toBe(200);
    return res;
  }

  return { createKey, storedRow, listKeys };
}
