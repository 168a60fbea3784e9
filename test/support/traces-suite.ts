import { count, eq } from 'drizzle-orm';
import { auditEntries } from '../../libs/platform/src/audit/audit.schema.js';
import { traces } from '../../libs/governance/src/traces/trace.schema.js';
import type { Registered, TestContext } from './app.js';
import type { TestAgent } from './builders.js';

export const TRACES = '/api/v1/traces';

export function traceBody(
  over: Record<string, unknown> = {},
  input = {},
  output = {},
): Record<string, unknown> {
  return {
    inputContext: { prompt: 'What is the refund window for order 1234?', ...input },
    outputDecision: { action: 'llm_response', text: 'Refunds are accepted within 30 days.', ...output },
    confidence: 0.9,
    ...over,
  };
}

/**
 * The policies the reporting suites judge traces by: a block of prompts that mention a card number, and a flag,
 * named `flag.name`, of a confidence below `flag.below`; for every agent of the organization.
 */
export async function cardAndConfidencePolicies(
  ctx: TestContext,
  organizationId: string,
  flag: { name: string; below: number },
): Promise<void> {
  await ctx.newPolicy(organizationId, {
    name: 'No card numbers',
    outcome: 'block',
    conditions: [{ field: 'inputContext.prompt', operator: 'contains', value: 'card number' }],
  });
  await ctx.newPolicy(organizationId, {
    name: flag.name,
    outcome: 'flag',
    conditions: [{ field: 'confidence', operator: 'lt', value: flag.below }],
  });
}

export interface TraceFixture {
  owner: Registered;
  other: Registered;
  plain: TestAgent;
  guarded: TestAgent;
  otherAgent: TestAgent;
  blockPolicyId: string;
  flagPolicyId: string;
}

/**
 * The traces suites' organizations: an owner with a plain and a guarded agent, another organization with its own
 * agent, and policies that apply to the guarded agent only, so that every other test ingests without matching any.
 */
export async function traceFixture(ctx: TestContext): Promise<TraceFixture> {
  const owner = await ctx.register({ organizationName: 'Trace Owners' });
  const other = await ctx.register({ organizationName: 'Other Org' });
  const plain = await ctx.newAgent(owner.organization.id, 'Plain agent');
  const guarded = await ctx.newAgent(owner.organization.id, 'Guarded agent');
  const otherAgent = await ctx.newAgent(other.organization.id, 'Other agent');
  const blockPolicyId = await ctx.newPolicy(owner.organization.id, {
    name: 'No card numbers',
    outcome: 'block',
    agentIds: [guarded.id],
    conditions: [{ field: 'inputContext.prompt', operator: 'contains', value: 'card number' }],
  });
  const flagPolicyId = await ctx.newPolicy(owner.organization.id, {
    name: 'Low confidence',
    outcome: 'flag',
    agentIds: [guarded.id],
    conditions: [{ field: 'confidence', operator: 'lt', value: 0.7 }],
  });
  await ctx.newPolicy(owner.organization.id, {
    name: 'Nested quantifier',
    outcome: 'flag',
    agentIds: [guarded.id],
    conditions: [{ field: 'inputContext.prompt', operator: 'matches', value: '^(a+)+$' }],
  });
  return { owner, other, plain, guarded, otherAgent, blockPolicyId, flagPolicyId };
}

/** The helpers of the traces suites, on the suite's context and owner (both made in beforeAll). */
export function traceHelpers(context: () => TestContext, owner: () => Registered) {
  const post = (key: string, body: unknown, headers: Record<string, string> = {}) =>
    context().post(TRACES, { apiKey: key, body, headers });

  async function traceRow(id: string) {
    const [row] = await context().db.db.select().from(traces).where(eq(traces.id, id));
    return row;
  }

  async function auditFor(traceId: string) {
    return context().db.db.select().from(auditEntries).where(eq(auditEntries.targetId, traceId));
  }

  async function traceCount(organizationId = owner().organization.id): Promise<number> {
    const [row] = await context()
      .db.db.select({ n: count() })
      .from(traces)
      .where(eq(traces.organizationId, organizationId));
    return row!.n;
  }

  return { post, traceRow, auditFor, traceCount };
}
