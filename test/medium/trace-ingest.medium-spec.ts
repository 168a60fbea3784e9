import { and, eq, isNull } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError, auditEntries, SCHEMA_VERSIONS } from '#platform';
import { apiKeys } from '../../libs/identity/src/api-keys/api-key.schema.js';
import { AgentsService } from '../../libs/governance/src/agents/agents.service.js';
import { reviewItems } from '../../libs/governance/src/review/review-item.schema.js';
import { traces } from '../../libs/governance/src/traces/trace.schema.js';
import { TraceIngestPipeline } from '../../libs/governance/src/traces/trace-ingest.pipeline.js';
import { validateTraceIngest } from '../../libs/governance/src/traces/trace-ingest.validation.js';
import type { TraceWrite } from '../../libs/governance/src/traces/trace-writer.js';
import { TEST_META, type TestAgent, type TestOrganization } from '../support/builders.js';
import { MediumContext } from '../support/medium.js';

const VERSION = SCHEMA_VERSIONS[0]!;

describe('TraceIngestPipeline with the trace writer, the review module, agents and keys', () => {
  let ctx: MediumContext;
  let org: TestOrganization;
  let agent: TestAgent;
  let pipeline: TraceIngestPipeline;

  beforeAll(async () => {
    ctx = await MediumContext.create();
    org = await ctx.newOrganization({ organizationName: 'Ingest Org' });
    agent = await ctx.newAgent(org.id, 'Ingesting');
    await ctx.newPolicy(org.id, {
      name: 'Refunds need a human',
      outcome: 'flag',
      conditions: [{ field: 'outputDecision.text', operator: 'contains', value: 'refund' }],
    });
    await ctx.newPolicy(org.id, {
      name: 'No card numbers',
      outcome: 'block',
      conditions: [{ field: 'outputDecision.text', operator: 'contains', value: '4111' }],
    });
    pipeline = ctx.service(TraceIngestPipeline);
  });

  afterAll(async () => ctx?.close());

  function prepare(
    text: string,
    extra: { idempotencyKey?: string; agentId?: string } = {},
  ): Promise<TraceWrite> {
    const input = validateTraceIngest(
      {
        inputContext: { prompt: 'Customer asks' },
        outputDecision: { action: 'answer', text },
        confidence: 0.9,
      },
      VERSION.limits,
    );
    return pipeline.prepare(org.owner, extra.agentId ?? agent.id, input, {
      schemaVersion: VERSION,
      meta: TEST_META,
      idempotencyKey: extra.idempotencyKey,
    });
  }

  async function storeOne(write: TraceWrite) {
    const [outcome] = pipeline.store(org.id, [write]);
    return outcome!;
  }

  it('stores a flagged trace with its pending review item and its audit entry, all linked', async () => {
    const outcome = await storeOne(await prepare('I will process your refund now.'));
    expect(outcome.kind).toBe('stored');
    const trace = outcome.kind === 'stored' ? outcome.trace : undefined;
    expect(trace).toMatchObject({ status: 'flagged', agentId: agent.id });
    const [item] = await ctx.db.db.select().from(reviewItems).where(eq(reviewItems.traceId, trace!.id));
    expect(item).toMatchObject({
      id: trace!.reviewItemId,
      organizationId: org.id,
      agentId: agent.id,
      status: 'pending',
      assignedTo: null,
      decision: null,
    });
    expect(item!.matchedPolicies.map((p) => p.name)).toEqual(['Refunds need a human']);
    const [entry] = await ctx.db.db.select().from(auditEntries).where(eq(auditEntries.targetId, trace!.id));
    expect(entry).toMatchObject({ eventType: 'trace.flagged', metadata: { reviewItemId: item!.id } });
  });

  it('stores a blocked trace without a review item', async () => {
    const outcome = await storeOne(await prepare('Your card 4111 is on file.'));
    const trace = outcome.kind === 'stored' ? outcome.trace : undefined;
    expect(trace).toMatchObject({ status: 'blocked', reviewItemId: null });
    expect(await ctx.db.db.select().from(reviewItems).where(eq(reviewItems.traceId, trace!.id))).toEqual([]);
  });

  it('answers a repeated idempotency key with the first trace, and stores it once', async () => {
    const first = await storeOne(await prepare('Hello.', { idempotencyKey: 'medium-key-1' }));
    const again = await storeOne(await prepare('Hello again.', { idempotencyKey: 'medium-key-1' }));
    const firstId = first.kind === 'stored' ? first.trace.id : '';
    expect(again).toEqual({ kind: 'duplicate', id: firstId });
    const stored = await ctx.db.db
      .select({ id: traces.id })
      .from(traces)
      .where(eq(traces.organizationId, org.id));
    expect(stored.filter((t) => t.id === firstId)).toHaveLength(1);
  });

  it('refuses, under the organization’s lock, a trace whose agent was deleted after it was prepared', async () => {
    const doomed = await ctx.newAgent(org.id, 'Deleted meanwhile');
    const write = await prepare('Nothing special.', { agentId: doomed.id });
    await ctx.service(AgentsService).remove(org.owner, doomed.id, TEST_META);
    const attempt = storeOne(write);
    await expect(attempt).rejects.toBeInstanceOf(AppError);
    await expect(attempt).rejects.toMatchObject({ status: 400, code: 'VALIDATION_ERROR' });
    expect(await ctx.db.db.select().from(traces).where(eq(traces.id, write.trace.id))).toEqual([]);
  });

  it('refuses a trace sent with a key revoked after it was prepared', async () => {
    const rotating = await ctx.newAgent(org.id, 'Rotated meanwhile');
    const write = await prepare('Nothing special.', { agentId: rotating.id });
    const [key] = await ctx.db.db
      .select({ id: apiKeys.id })
      .from(apiKeys)
      .where(and(eq(apiKeys.agentId, rotating.id), isNull(apiKeys.revokedAt)));
    const sent: TraceWrite = { ...write, keyId: key!.id };
    await ctx.service(AgentsService).regenerateKey(org.owner, rotating.id, TEST_META);
    await expect(storeOne(sent)).rejects.toMatchObject({ status: 401, code: 'UNAUTHORIZED' });
  });
});
