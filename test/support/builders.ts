import type { Abstract, Type } from '@nestjs/common';
import { and, eq } from 'drizzle-orm';
import type { Actor, DatabaseHandle, FixedClock, Plan, RequestMeta } from '#platform';
import { AgentsService } from '../../libs/governance/src/agents/agents.service.js';
import type { PolicyCondition } from '../../libs/governance/src/policies/engine/index.js';
import { PoliciesService } from '../../libs/governance/src/policies/policies.service.js';
import type { CreatePolicyDto } from '../../libs/governance/src/policies/dto/policy.dto.js';
import { AuthService } from '../../libs/identity/src/auth/auth.service.js';
import { memberships, organizations } from '../../libs/identity/src/organizations/organization.schema.js';
import { users } from '../../libs/identity/src/users/user.schema.js';

/** What the builders need of a test context: its services, its database and its clock. */
export interface BuilderHost {
  readonly db: DatabaseHandle;
  readonly clock: FixedClock;
  service<T>(type: Type<T> | Abstract<T>): T;
}

export interface TestAgent {
  id: string;
  /** The agent's `svc_agent_` key, shown once at creation. */
  key: string;
}

export interface TestPolicy {
  name?: string;
  outcome: 'block' | 'flag';
  conditions: PolicyCondition[];
  agentIds?: string[];
  match?: 'all' | 'any';
  priority?: number;
}

export interface TestOrganization {
  id: string;
  plan: Plan;
  /** The owner who registered it, as the access guard would resolve their session. */
  owner: Actor & { userId: string; email: string };
}

/** Builders call services on behalf of a test, not of a request: no address, no user agent. */
export const TEST_META: RequestMeta = { ip: null, userAgent: null };

let counter = 0;

/** A new organization with its owner, registered through the auth service (as POST /auth/register does). */
export async function buildOrganization(
  host: BuilderHost,
  overrides: Partial<{ name: string; email: string; organizationName: string }> = {},
): Promise<TestOrganization> {
  counter += 1;
  const result = await host.service(AuthService).register(
    {
      name: overrides.name ?? 'Test Owner',
      email: overrides.email ?? `owner-${process.pid}-${Date.now().toString(36)}-${counter}@example.com`,
      password: 'Sup3r-Secret-pass',
      organizationName: overrides.organizationName ?? 'Test Org',
    },
    TEST_META,
  );
  return {
    id: result.organization.id,
    plan: result.organization.plan as Plan,
    owner: await ownerOf(host, result.organization.id),
  };
}

/** The organization's first active owner, as an actor of a session (the caller services expect). */
export async function ownerOf(host: BuilderHost, organizationId: string): Promise<TestOrganization['owner']> {
  const [row] = await host.db.db
    .select({ userId: users.id, email: users.email, plan: organizations.plan })
    .from(memberships)
    .innerJoin(users, eq(users.id, memberships.userId))
    .innerJoin(organizations, eq(organizations.id, memberships.organizationId))
    .where(
      and(
        eq(memberships.organizationId, organizationId),
        eq(memberships.role, 'owner'),
        eq(memberships.isActive, true),
      ),
    )
    .limit(1);
  if (!row) throw new Error(`Organization ${organizationId} has no active owner`);
  return {
    type: 'user',
    credential: 'jwt',
    organizationId,
    plan: row.plan as Plan,
    userId: row.userId,
    email: row.email,
    role: 'owner',
  };
}

/** An agent and its key, created by the organization's owner through the agents service (audited). */
export async function buildAgent(
  host: BuilderHost,
  organizationId: string,
  name = 'Agent',
): Promise<TestAgent> {
  const created = await host
    .service(AgentsService)
    .create(await ownerOf(host, organizationId), { name }, TEST_META);
  return { id: created.id, key: created.apiKey };
}

/** An active policy, created by the organization's owner through the policies service (audited, cache announced). */
export async function buildPolicy(
  host: BuilderHost,
  organizationId: string,
  policy: TestPolicy,
): Promise<string> {
  const dto: CreatePolicyDto = {
    name: policy.name ?? `${policy.outcome} policy`,
    outcome: policy.outcome,
    conditions: policy.conditions,
    match: policy.match ?? 'all',
    agentIds: policy.agentIds ?? [],
    priority: policy.priority ?? 100,
  };
  const created = await host
    .service(PoliciesService)
    .create(await ownerOf(host, organizationId), dto, TEST_META);
  return created.id;
}

/** The builders of a test context (TestContext over HTTP, MediumContext without): data made through the services. */
export abstract class BuilderContext implements BuilderHost {
  abstract readonly db: DatabaseHandle;
  abstract readonly clock: FixedClock;
  abstract service<T>(type: Type<T> | Abstract<T>): T;

  /** A new organization and its owner, through the auth service. */
  newOrganization(overrides?: Parameters<typeof buildOrganization>[1]): Promise<TestOrganization> {
    return buildOrganization(this, overrides);
  }

  /** An agent of the organization and its key, created by its owner through the agents service. */
  newAgent(organizationId: string, name?: string): Promise<TestAgent> {
    return buildAgent(this, organizationId, name);
  }

  /** An active policy of the organization, created by its owner through the policies service. */
  newPolicy(organizationId: string, policy: TestPolicy): Promise<string> {
    return buildPolicy(this, organizationId, policy);
  }
}
