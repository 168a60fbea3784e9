import { and, eq } from 'drizzle-orm';
import { expect } from 'vitest';
import { domainEvents } from '../../libs/platform/src/events/domain-event.schema.js';
import type { TestContext } from './app.js';
import type { TestAgent } from './builders.js';
import { TRACES, traceBody } from './traces-suite.js';

export const QUEUE = '/api/v1/review-queue';
export const PATTERNS = '/api/v1/approval-patterns';

/** The flag policy of the review suites: any prompt that mentions a refund, for the given agents. */
export function refundFlagPolicy(
  ctx: TestContext,
  organizationId: string,
  agentIds: string[],
): Promise<string> {
  return ctx.newPolicy(organizationId, {
    name: 'Refunds need a human',
    outcome: 'flag',
    agentIds,
    conditions: [{ field: 'inputContext.prompt', operator: 'contains', value: 'refund' }],
  });
}

/** Ingests a trace the refund policy flags; returns the trace id and its review item id. */
export async function ingestFlagged(
  ctx: TestContext,
  agent: TestAgent,
  action = 'issue_refund',
): Promise<{ traceId: string; reviewItemId: string }> {
  const res = await ctx.post(TRACES, {
    apiKey: agent.key,
    body: traceBody({}, { prompt: 'Please refund order 42' }, { action }),
  });
  expect(res.statusCode, res.body).toBe(202);
  return { traceId: res.json().data.id, reviewItemId: res.json().data.reviewItemId };
}

export async function ingestManyFlagged(
  ctx: TestContext,
  agent: TestAgent,
  n: number,
  action?: string,
): Promise<{ traceId: string; reviewItemId: string }[]> {
  return Promise.all(Array.from({ length: n }, () => ingestFlagged(ctx, agent, action)));
}

export async function eventsOf(ctx: TestContext, organizationId: string, type: string) {
  return ctx.db.db
    .select()
    .from(domainEvents)
    .where(and(eq(domainEvents.organizationId, organizationId), eq(domainEvents.type, type)));
}
