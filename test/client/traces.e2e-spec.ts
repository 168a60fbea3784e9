import {
  type GovernanceClient,
  GovernanceError,
  type Schemas,
  type TraceInput,
  type TraceResult,
} from '@governance/client';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { ListeningService, signUp, type SignedUp } from './harness.js';

const decision = (prompt: string, extra: Partial<TraceInput> = {}): TraceInput => ({
  inputContext: { prompt },
  outputDecision: { action: 'reply', text: `Answer to: ${prompt}` },
  confidence: 0.9,
  ...extra,
});

describe('client: agents, policies, traces with their verdicts, review and pagination', () => {
  let service: ListeningService;
  let owner: SignedUp;
  let agentId: string;
  let agent: GovernanceClient;
  let flagPolicyId: string;
  let blockPolicyId: string;

  beforeAll(async () => {
    service = await ListeningService.start();
    owner = await signUp(service, 'Traced');
    const created = await owner.client.post('/api/v1/agents', { body: { name: 'Refund assistant' } });
    expect(created.apiKey).toMatch(/^svc_agent_/);
    agentId = created.id;
    agent = service.client({ credentials: { apiKey: created.apiKey } });
    const flag = await owner.client.post('/api/v1/policies', {
      body: {
        name: 'Low confidence',
        outcome: 'flag',
        conditions: [{ field: 'confidence', operator: 'lt', value: 0.5 }],
      },
    });
    const block = await owner.client.post('/api/v1/policies', {
      body: {
        name: 'Destructive tool calls',
        outcome: 'block',
        conditions: [{ field: 'toolCalls.name', operator: 'matches', value: '^(delete|drop)_' }],
      },
    });
    flagPolicyId = flag.id;
    blockPolicyId = block.id;
  });
  afterAll(async () => service?.close());

  it('sendTrace resolves to approved, flagged (with its review item) and blocked (with its policy)', async () => {
    const approved = await agent.sendTrace(decision('Where is my parcel?'));
    expectTypeOf(approved).toEqualTypeOf<TraceResult>();
    expect(approved).toMatchObject({
      verdict: 'approved',
      trace: { status: 'approved', confidence: 0.9 },
      attempts: 1,
      duplicate: false,
    });

    const flagged = await agent.sendTrace(decision('Refund 480 EUR?', { confidence: 0.3 }));
    expect(flagged.verdict).toBe('flagged');
    if (flagged.verdict !== 'flagged') throw new Error('not flagged');
    expectTypeOf(flagged.reviewItemId).toEqualTypeOf<string>();
    expect(flagged.reviewItemId).toMatch(/^[0-9a-f]{24}$/);

    const blocked = await agent.sendTrace(
      decision('Delete my account', {
        outputDecision: {
          action: 'delete',
          text: 'Deleting',
          toolCalls: [{ name: 'delete_customer', arguments: { id: 7 } }],
        },
      }),
    );
    expect(blocked).toMatchObject({
      verdict: 'blocked',
      trace: { status: 'blocked' },
      matchedPolicies: [{ policyId: blockPolicyId, name: 'Destructive tool calls', outcome: 'block' }],
    });

    // The owner reads them back, with the policies that matched.
    const stored = await owner.client.get('/api/v1/traces/{id}', {
      params: { path: { id: flagged.trace.id } },
    });
    expectTypeOf(stored).toEqualTypeOf<Schemas['TraceDto']>();
    expect(stored).toMatchObject({ agentId, status: 'flagged', reviewItemId: flagged.reviewItemId });
    expect(stored.policyResults.map((p) => p.policyId)).toEqual([flagPolicyId]);
  });

  it('a reviewer approves a flagged trace from the queue, and the trace becomes approved', async () => {
    const flagged = await agent.sendTrace(decision('Refund 90 EUR?', { confidence: 0.2 }));
    if (flagged.verdict !== 'flagged') throw new Error(`expected flagged, got ${flagged.verdict}`);
    let item: Schemas['ReviewItemDto'] | undefined;
    for await (const pending of owner.client.paginate('/api/v1/review-queue', {
      params: { query: { agentId } },
    })) {
      if (pending.traceId === flagged.trace.id) item = pending;
    }
    expect(item).toMatchObject({
      id: flagged.reviewItemId,
      status: 'pending',
      matchedPolicies: [expect.objectContaining({ policyId: flagPolicyId })],
    });
    const decided = await owner.client.post('/api/v1/review-queue/{id}/decision', {
      params: { path: { id: flagged.reviewItemId } },
      body: { decision: 'approve', notes: 'The parcel was lost by the carrier' },
    });
    expect(decided).toMatchObject({ status: 'approved', decision: 'approve', decidedBy: owner.userId });
    const trace = await owner.client.get('/api/v1/traces/{id}', {
      params: { path: { id: flagged.trace.id } },
    });
    expect(trace.status).toBe('approved');
    // Deciding again is a typed conflict.
    const again = await owner.client
      .post('/api/v1/review-queue/{id}/decision', {
        params: { path: { id: flagged.reviewItemId } },
        body: { decision: 'reject' },
      })
      .catch((e: unknown) => e);
    expect(again).toBeInstanceOf(GovernanceError);
    expect(again).toMatchObject({ status: 409, code: 'ALREADY_DECIDED' });
  });

  it('sendTrace retries an answer lost on the way back with the same Idempotency-Key: one trace is stored', async () => {
    const key = await owner.client.post('/api/v1/auth/keys', { body: { name: 'ingest' } });
    let dropped = 0;
    const lossy = service.client({
      credentials: { apiKey: key.key },
      retry: { initialDelayMs: 10 },
      // The service answers the first POST /traces, and the answer is lost (the connection dies on the way back).
      fetch: async (request) => {
        const response = await fetch(request);
        if (
          request.method === 'POST' &&
          new URL(request.url).pathname === '/api/v1/traces' &&
          dropped === 0
        ) {
          dropped += 1;
          await response.body?.cancel();
          throw new TypeError('fetch failed: other side closed');
        }
        return response;
      },
    });
    const prompt = `Lost answer ${Date.now()}`;
    const result = await lossy.sendTrace({ ...decision(prompt, { confidence: 0.1 }), agentId });
    expect(result).toMatchObject({ verdict: 'flagged', attempts: 2, duplicate: true });
    expect(result.matchedPolicies?.map((p) => p.policyId)).toEqual([flagPolicyId]);
    const stored: string[] = [];
    for await (const trace of owner.client.paginate('/api/v1/traces', {
      params: { query: { agentId, limit: 100 } },
    })) {
      if (trace.inputContext?.prompt === prompt) stored.push(trace.id);
    }
    expect(stored).toEqual([result.trace.id]);
  });

  it('an agent key cannot read the trace a repeated key names: the 409 is thrown with its id', async () => {
    const idempotencyKey = `order-${Date.now()}`;
    const first = await agent.sendTrace(decision('Once only'), { idempotencyKey });
    const error = await agent.sendTrace(decision('Once only'), { idempotencyKey }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GovernanceError);
    expect(error).toMatchObject({ status: 409, code: 'SVC_DUPLICATE_REQUEST', data: { id: first.trace.id } });
  });

  it('paginate walks every page of the traces; page() reports the pages', async () => {
    const listed = await service.client({
      credentials: {
        apiKey: (await owner.client.post('/api/v1/agents', { body: { name: 'Paged' } })).apiKey,
      },
    });
    const sent: string[] = [];
    for (let i = 0; i < 5; i++) sent.push((await listed.sendTrace(decision(`Page me ${i}`))).trace.id);
    const pagedAgent = (await owner.client.get('/api/v1/traces/{id}', { params: { path: { id: sent[0]! } } }))
      .agentId;

    const first = await owner.client.page('/api/v1/traces', {
      params: { query: { agentId: pagedAgent, limit: 2 } },
    });
    expect(first.pagination).toMatchObject({ page: 1, limit: 2, total: 5, totalPages: 3 });
    expect(first.items).toHaveLength(2);

    const seen: string[] = [];
    for await (const trace of owner.client.paginate('/api/v1/traces', {
      params: { query: { agentId: pagedAgent, limit: 2 } },
    })) {
      expectTypeOf(trace).toEqualTypeOf<Schemas['TraceDto']>();
      seen.push(trace.id);
    }
    // Newest first, every one once.
    expect(seen).toEqual([...sent].reverse());
  });
});
