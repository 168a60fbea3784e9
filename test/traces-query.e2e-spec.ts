import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Registered, TestContext } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';
import { TRACES, traceBody, traceFixture, traceHelpers } from './support/traces-suite.js';
import { type TestAgent } from './support/builders.js';

const ID = /^[0-9a-f]{24}$/;

describe('traces', () => {
  let ctx: TestContext;
  let owner: Registered;
  let otherAgent: TestAgent;

  beforeAll(async () => {
    ctx = await TestContext.create();
    ({ owner, otherAgent } = await traceFixture(ctx));
  });
  afterAll(async () => ctx?.close());

  const { post } = traceHelpers(
    () => ctx,
    () => owner,
  );

  describe('GET /traces', () => {
    let listOwner: Registered;
    let a1: TestAgent;
    let a2: TestAgent;
    const ids: string[] = [];
    let startedAt: Date;

    beforeAll(async () => {
      listOwner = await ctx.register({ organizationName: 'Listing Org' });
      const org = listOwner.organization.id;
      a1 = await ctx.newAgent(org, 'L1');
      a2 = await ctx.newAgent(org, 'L2');
      await ctx.newPolicy(org, {
        outcome: 'flag',
        conditions: [{ field: 'inputContext.prompt', operator: 'contains', value: 'flagme' }],
      });
      await ctx.newPolicy(org, {
        outcome: 'block',
        conditions: [{ field: 'inputContext.prompt', operator: 'contains', value: 'blockme' }],
      });
      startedAt = ctx.clock.now();
      // Oldest first: a1 approved, a2 flagged, a1 blocked, a2 approved, a1 approved.
      const plan: [TestAgent, string][] = [
        [a1, 'first'],
        [a2, 'flagme second'],
        [a1, 'blockme third'],
        [a2, 'fourth'],
        [a1, 'fifth'],
      ];
      for (const [agent, prompt] of plan) {
        ctx.clock.advance(60_000);
        const res = await post(agent.key, traceBody({}, { prompt }));
        expect([201, 202, 403]).toContain(res.statusCode);
        ids.push(res.json().data.id);
      }
    });

    const list = (query: Record<string, string> = {}, token = listOwner.token) =>
      ctx.get(TRACES, { token, query });

    it('lists newest first with page 1, limit 20 by default', async () => {
      const res = await list();
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json();
      expect(body.data.map((t: { id: string }) => t.id)).toEqual([...ids].reverse());
      expect(body.pagination).toEqual({ page: 1, limit: 20, total: 5, totalPages: 1 });
      expect(Object.keys(body.data[0]).sort()).toEqual(
        [
          'id',
          'organizationId',
          'agentId',
          'status',
          'confidence',
          'inputContext',
          'outputDecision',
          'metadata',
          'rationale',
          'schemaVersion',
          'humanOverride',
          'policyResults',
          'reviewItemId',
          'hasSubject',
          'contentSalt',
          'piiMasked',
          'erasedAt',
          'createdAt',
          'updatedAt',
        ].sort(),
      );
    });

    it('filters by agentId, status, from and to', async () => {
      const agentRes = await list({ agentId: a1.id });
      expect(agentRes.json().data.map((t: { id: string }) => t.id)).toEqual([ids[4], ids[2], ids[0]]);
      expect((await list({ status: 'flagged' })).json().data.map((t: { id: string }) => t.id)).toEqual([
        ids[1],
      ]);
      expect((await list({ status: 'blocked' })).json().data.map((t: { id: string }) => t.id)).toEqual([
        ids[2],
      ]);
      expect((await list({ status: 'success' })).json().data).toEqual([]);
      const from = new Date(startedAt.getTime() + 2 * 60_000).toISOString();
      const to = new Date(startedAt.getTime() + 4 * 60_000).toISOString();
      expect((await list({ from, to })).json().data.map((t: { id: string }) => t.id)).toEqual([
        ids[3],
        ids[2],
        ids[1],
      ]);
    });

    it('pages, and clamps a limit above 100 to 100', async () => {
      const page2 = (await list({ page: '2', limit: '2' })).json();
      expect(page2.data.map((t: { id: string }) => t.id)).toEqual([ids[2], ids[1]]);
      expect(page2.pagination).toEqual({ page: 2, limit: 2, total: 5, totalPages: 3 });
      expect((await list({ limit: '500' })).json().pagination.limit).toBe(100);
    });

    it('returns 400 VALIDATION_ERROR for non-numeric paging, an unknown status or a malformed date', async () => {
      const queries: Record<string, string>[] = [
        { limit: 'ten' },
        { page: 'x' },
        { page: '0' },
        { status: 'pending' },
        { from: 'yesterday' },
        { to: '2026-13-45' },
      ];
      for (const query of queries) {
        expectErrorEnvelope(await list(query), 400, 'VALIDATION_ERROR');
      }
    });

    it('is readable by a viewer, and a workspace key scoped to an agent sees only that agent', async () => {
      const viewer = await ctx.addMember(listOwner.organization.id, 'viewer');
      expect((await list({}, viewer.token)).json().pagination.total).toBe(5);
      const keyRes = await ctx.post('/api/v1/auth/keys', {
        token: listOwner.token,
        body: { name: 'scoped', scope: { agentIds: [a2.id] } },
      });
      const key = keyRes.json().data.key as string;
      const res = await ctx.get(TRACES, { apiKey: key });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data.map((t: { id: string }) => t.id)).toEqual([ids[3], ids[1]]);
      expectErrorEnvelope(
        await ctx.get(TRACES, { apiKey: key, query: { agentId: a1.id } }),
        403,
        'FORBIDDEN',
      );
      expectErrorEnvelope(await ctx.get(`${TRACES}/${ids[0]}`, { apiKey: key }), 404, 'NOT_FOUND');
    });

    it('does not list another organization’s traces, and refuses agent keys', async () => {
      expect((await list({}, owner.token)).json().data.map((t: { id: string }) => t.id)).not.toContain(
        ids[0],
      );
      expectErrorEnvelope(await ctx.get(TRACES, { apiKey: a1.key }), 403, 'FORBIDDEN');
    });

    it('GET /traces/:id returns the trace object; another organization gets 404', async () => {
      const res = await ctx.get(`${TRACES}/${ids[1]}`, { token: listOwner.token });
      expect(res.statusCode, res.body).toBe(200);
      const trace = res.json().data;
      expect(trace).toEqual({
        id: ids[1],
        organizationId: listOwner.organization.id,
        agentId: a2.id,
        status: 'flagged',
        confidence: 0.9,
        inputContext: { prompt: 'flagme second' },
        outputDecision: { action: 'llm_response', text: 'Refunds are accepted within 30 days.' },
        metadata: {},
        rationale: null,
        schemaVersion: '2026-04-11',
        humanOverride: false,
        policyResults: [{ policyId: expect.stringMatching(ID), name: 'flag policy', outcome: 'flag' }],
        reviewItemId: expect.stringMatching(ID),
        hasSubject: false,
        contentSalt: expect.stringMatching(/^[0-9a-f]{32}$/),
        piiMasked: null,
        erasedAt: null,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
      expectErrorEnvelope(await ctx.get(`${TRACES}/${ids[1]}`, { token: owner.token }), 404, 'NOT_FOUND');
      expectErrorEnvelope(await ctx.get(`${TRACES}/not-an-id`, { token: owner.token }), 404, 'NOT_FOUND');
      expectErrorEnvelope(
        await ctx.get(`${TRACES}/${'0'.repeat(24)}`, { token: owner.token }),
        404,
        'NOT_FOUND',
      );
    });
  });

  describe('GET /traces/:id/similar', () => {
    let simOwner: Registered;
    let agent: TestAgent;
    const ingest = async (prompt: string, text: string) => {
      const res = await post(agent.key, traceBody({}, { prompt }, { text }));
      expect(res.statusCode, res.body).toBe(201);
      return res.json().data.id as string;
    };

    beforeAll(async () => {
      simOwner = await ctx.register({ organizationName: 'Similarity Org' });
      agent = await ctx.newAgent(simOwner.organization.id, 'Support');
    });

    it('returns related traces of the organization, most similar first, excluding the trace itself', async () => {
      const base = await ingest(
        'How do I reset my account password?',
        'Use the reset password link on the login page.',
      );
      const close = await ingest(
        'How do I reset my account password quickly?',
        'Use the reset password link on the login page.',
      );
      const related = await ingest('Reset my password please', 'Click the reset password link.');
      const unrelated = await ingest('What is the weather in Lisbon tomorrow?', 'Sunny with light winds.');
      // Same text in another organization is never returned.
      await post(
        otherAgent.key,
        traceBody(
          {},
          { prompt: 'How do I reset my account password?' },
          { text: 'Use the reset password link on the login page.' },
        ),
      );

      const res = await ctx.get(`${TRACES}/${base}/similar`, { token: simOwner.token });
      expect(res.statusCode, res.body).toBe(200);
      const data = res.json().data as { id: string; similarity: number; excerpt: string; status: string }[];
      expect(data.map((d) => d.id)).toEqual([close, related]);
      expect(data.map((d) => d.id)).not.toContain(unrelated);
      expect(data[0]!.similarity).toBeGreaterThan(data[1]!.similarity);
      expect(data[0]).toEqual({
        id: close,
        status: 'approved',
        confidence: 0.9,
        similarity: expect.any(Number),
        createdAt: expect.any(String),
        excerpt: expect.stringContaining('How do I reset my account password quickly?'),
      });
      const limited = await ctx.get(`${TRACES}/${base}/similar`, {
        token: simOwner.token,
        query: { limit: '1' },
      });
      expect(limited.json().data.map((d: { id: string }) => d.id)).toEqual([close]);
    });

    it('answers 404 for another organization and 400 for a limit above 20', async () => {
      const id = await ingest('Where is my parcel?', 'It ships tomorrow.');
      expectErrorEnvelope(await ctx.get(`${TRACES}/${id}/similar`, { token: owner.token }), 404, 'NOT_FOUND');
      expectErrorEnvelope(
        await ctx.get(`${TRACES}/${id}/similar`, { token: simOwner.token, query: { limit: '21' } }),
        400,
        'VALIDATION_ERROR',
      );
    });
  });
});
