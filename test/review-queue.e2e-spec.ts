import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Registered, TestContext } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';
import type { TestAgent } from './support/builders.js';
import { auditEntriesOf } from './support/audit-entries.js';
import { eventsOf, ingestFlagged, QUEUE, refundFlagPolicy } from './support/review-suite.js';
import { TRACES } from './support/traces-suite.js';

describe('review queue', () => {
  let ctx: TestContext;
  let owner: Registered;
  let other: Registered;
  let agent: TestAgent;
  let secondAgent: TestAgent;
  let otherAgent: TestAgent;
  let policyId: string;
  let admin: { userId: string; token: string };
  let member: { userId: string; token: string };
  let viewer: { userId: string; token: string };

  beforeAll(async () => {
    ctx = await TestContext.create();
    owner = await ctx.register({ organizationName: 'Reviewers' });
    other = await ctx.register({ organizationName: 'Elsewhere' });
    const org = owner.organization.id;
    agent = await ctx.newAgent(org, 'Refund bot');
    secondAgent = await ctx.newAgent(org, 'Second bot');
    otherAgent = await ctx.newAgent(other.organization.id, 'Other bot');
    policyId = await refundFlagPolicy(ctx, org, []);
    await refundFlagPolicy(ctx, other.organization.id, []);
    admin = await ctx.addMember(org, 'admin');
    member = await ctx.addMember(org, 'member');
    viewer = await ctx.addMember(org, 'viewer');
  });
  afterAll(async () => ctx?.close());

  const decide = (token: string, id: string, body: Record<string, unknown>) =>
    ctx.post(`${QUEUE}/${id}/decision`, { token, body });
  const traceStatus = async (traceId: string) =>
    (await ctx.get(`${TRACES}/${traceId}`, { token: owner.token })).json().data.status;

  describe('GET /review-queue', () => {
    it('lists pending items by default, oldest first, each with its trace excerpt and matched policies', async () => {
      const first = await ingestFlagged(ctx, agent);
      const second = await ingestFlagged(ctx, secondAgent);
      const res = await ctx.get(QUEUE, { token: viewer.token, query: { limit: '100' } });
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json();
      const ids = body.data.map((item: { id: string }) => item.id);
      expect(ids.indexOf(first.reviewItemId)).toBeLessThan(ids.indexOf(second.reviewItemId));
      expect(body.pagination).toMatchObject({ page: 1, limit: 100 });
      const item = body.data.find((i: { id: string }) => i.id === first.reviewItemId);
      expect(item).toEqual({
        id: first.reviewItemId,
        traceId: first.traceId,
        agentId: agent.id,
        status: 'pending',
        matchedPolicies: [{ policyId, name: 'Refunds need a human', outcome: 'flag' }],
        assignedTo: null,
        decision: null,
        resolution: null,
        notes: null,
        decidedBy: null,
        decidedAt: null,
        createdAt: expect.any(String),
        trace: {
          prompt: 'Please refund order 42',
          text: 'Refunds are accepted within 30 days.',
          confidence: 0.9,
        },
      });
    });

    it('filters by agentId and status, and refuses unknown values with 400', async () => {
      const mine = await ingestFlagged(ctx, secondAgent);
      const byAgent = await ctx.get(QUEUE, {
        token: owner.token,
        query: { agentId: secondAgent.id, limit: '100' },
      });
      const items = byAgent.json().data as { agentId: string; id: string }[];
      expect(items.every((i) => i.agentId === secondAgent.id)).toBe(true);
      expect(items.map((i) => i.id)).toContain(mine.reviewItemId);
      const approved = await ctx.get(QUEUE, {
        token: owner.token,
        query: { status: 'approved', limit: '100' },
      });
      expect((approved.json().data as { id: string }[]).map((i) => i.id)).not.toContain(mine.reviewItemId);
      expectErrorEnvelope(
        await ctx.get(QUEUE, { token: owner.token, query: { status: 'done' } }),
        400,
        'VALIDATION_ERROR',
      );
      expectErrorEnvelope(
        await ctx.get(QUEUE, { token: owner.token, query: { agentId: 'x' } }),
        400,
        'VALIDATION_ERROR',
      );
      expectErrorEnvelope(
        await ctx.get(QUEUE, { token: owner.token, query: { page: 'one' } }),
        400,
        'VALIDATION_ERROR',
      );
    });

    it('never shows another organization’s items', async () => {
      const theirs = await ingestFlagged(ctx, otherAgent);
      const res = await ctx.get(QUEUE, { token: owner.token, query: { limit: '100' } });
      expect((res.json().data as { id: string }[]).map((i) => i.id)).not.toContain(theirs.reviewItemId);
      const own = await ctx.get(QUEUE, { token: other.token });
      expect((own.json().data as { id: string }[]).map((i) => i.id)).toEqual([theirs.reviewItemId]);
    });
  });

  describe('POST /review-queue/:id/decision', () => {
    it('approve: item approved, trace approved, audited review.approved, event review.completed', async () => {
      const { traceId, reviewItemId } = await ingestFlagged(ctx, agent);
      const res = await decide(member.token, reviewItemId, {
        decision: 'approve',
        notes: '  Checked the order.  ',
      });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data).toMatchObject({
        id: reviewItemId,
        status: 'approved',
        decision: 'approve',
        resolution: 'review',
        notes: 'Checked the order.',
        decidedBy: member.userId,
        decidedAt: expect.any(String),
      });
      expect(await traceStatus(traceId)).toBe('approved');
      const audit = await auditEntriesOf(ctx, owner.organization.id, 'review.approved', reviewItemId);
      expect(audit).toHaveLength(1);
      expect(audit[0]!.metadata).toMatchObject({
        traceId,
        decision: 'approve',
        traceStatus: 'approved',
        resolution: 'review',
      });
      const events = (await eventsOf(ctx, owner.organization.id, 'review.completed')).filter(
        (e) => e.data.reviewItemId === reviewItemId,
      );
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({
        agentId: agent.id,
        data: { traceId, decision: 'approve', traceStatus: 'approved' },
      });
    });

    it('reject: item rejected, trace blocked; deciding it again is 409 ALREADY_DECIDED and changes nothing', async () => {
      const { traceId, reviewItemId } = await ingestFlagged(ctx, agent);
      const res = await decide(owner.token, reviewItemId, { decision: 'reject' });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data).toMatchObject({ status: 'rejected', decision: 'reject', notes: null });
      expect(await traceStatus(traceId)).toBe('blocked');
      for (const decision of ['approve', 'reject', 'escalate']) {
        expectErrorEnvelope(await decide(owner.token, reviewItemId, { decision }), 409, 'ALREADY_DECIDED');
      }
      expect(await traceStatus(traceId)).toBe('blocked');
      expect(await auditEntriesOf(ctx, owner.organization.id, 'review.rejected', reviewItemId)).toHaveLength(
        1,
      );
      expect(await auditEntriesOf(ctx, owner.organization.id, 'review.approved', reviewItemId)).toHaveLength(
        0,
      );
    });

    it('escalate: trace stays flagged, and from then on only an owner or admin may decide it', async () => {
      const { traceId, reviewItemId } = await ingestFlagged(ctx, agent);
      const esc = await decide(member.token, reviewItemId, { decision: 'escalate', notes: 'Large amount' });
      expect(esc.statusCode, esc.body).toBe(200);
      expect(esc.json().data).toMatchObject({ status: 'escalated', decision: 'escalate', resolution: null });
      expect(await traceStatus(traceId)).toBe('flagged');
      expect(await auditEntriesOf(ctx, owner.organization.id, 'review.escalated', reviewItemId)).toHaveLength(
        1,
      );
      expect(
        (await eventsOf(ctx, owner.organization.id, 'review.escalated')).some(
          (e) => e.data.reviewItemId === reviewItemId,
        ),
      ).toBe(true);

      expectErrorEnvelope(
        await decide(member.token, reviewItemId, { decision: 'approve' }),
        403,
        'FORBIDDEN',
      );
      expectErrorEnvelope(
        await decide(admin.token, reviewItemId, { decision: 'escalate' }),
        409,
        'ALREADY_ESCALATED',
      );
      const pending = await ctx.get(QUEUE, {
        token: owner.token,
        query: { status: 'escalated', limit: '100' },
      });
      expect((pending.json().data as { id: string }[]).map((i) => i.id)).toContain(reviewItemId);

      const final = await decide(admin.token, reviewItemId, { decision: 'reject' });
      expect(final.statusCode, final.body).toBe(200);
      expect(final.json().data).toMatchObject({ status: 'rejected', decidedBy: admin.userId });
      expect(await traceStatus(traceId)).toBe('blocked');
    });

    it('exactly one of ten concurrent decisions wins; the nine others get 409 ALREADY_DECIDED', async () => {
      const { reviewItemId } = await ingestFlagged(ctx, agent);
      const responses = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          decide([owner.token, admin.token, member.token][i % 3]!, reviewItemId, {
            decision: i % 2 === 0 ? 'approve' : 'reject',
          }),
        ),
      );
      const statuses = responses.map((r) => r.statusCode).sort();
      expect(statuses).toEqual([200, 409, 409, 409, 409, 409, 409, 409, 409, 409]);
      for (const r of responses.filter((r) => r.statusCode === 409))
        expect(r.json().code).toBe('ALREADY_DECIDED');
      const audits = [
        ...(await auditEntriesOf(ctx, owner.organization.id, 'review.approved', reviewItemId)),
        ...(await auditEntriesOf(ctx, owner.organization.id, 'review.rejected', reviewItemId)),
      ];
      expect(audits).toHaveLength(1);
      const events = (await eventsOf(ctx, owner.organization.id, 'review.completed')).filter(
        (e) => e.data.reviewItemId === reviewItemId,
      );
      expect(events).toHaveLength(1);
    });

    it('refuses viewers (403), unknown or foreign items (404) and bad bodies (400), changing nothing', async () => {
      const { traceId, reviewItemId } = await ingestFlagged(ctx, agent);
      const theirs = await ingestFlagged(ctx, otherAgent);
      expectErrorEnvelope(
        await decide(viewer.token, reviewItemId, { decision: 'approve' }),
        403,
        'FORBIDDEN',
      );
      expectErrorEnvelope(
        await decide(owner.token, theirs.reviewItemId, { decision: 'approve' }),
        404,
        'NOT_FOUND',
      );
      expectErrorEnvelope(
        await decide(owner.token, 'f'.repeat(24), { decision: 'approve' }),
        404,
        'NOT_FOUND',
      );
      expectErrorEnvelope(await decide(owner.token, 'not-an-id', { decision: 'approve' }), 404, 'NOT_FOUND');
      expectErrorEnvelope(
        await decide(owner.token, reviewItemId, { decision: 'maybe' }),
        400,
        'VALIDATION_ERROR',
      );
      expectErrorEnvelope(await decide(owner.token, reviewItemId, {}), 400, 'VALIDATION_ERROR');
      expectErrorEnvelope(
        await decide(owner.token, reviewItemId, { decision: 'approve', notes: 'x'.repeat(4001) }),
        400,
        'VALIDATION_ERROR',
      );
      expectErrorEnvelope(
        await decide(owner.token, reviewItemId, { decision: 'approve', notes: 5 }),
        400,
        'VALIDATION_ERROR',
      );
      expect(await traceStatus(traceId)).toBe('flagged');
      const other$ = await ctx.get(`${TRACES}/${theirs.traceId}`, { token: other.token });
      expect(other$.json().data.status).toBe('flagged');
      const key = await ctx.post(`${QUEUE}/${reviewItemId}/decision`, {
        apiKey: agent.key,
        body: { decision: 'approve' },
      });
      expect([401, 403]).toContain(key.statusCode);
      expect(await traceStatus(traceId)).toBe('flagged');
    });
  });

  describe('POST /review-queue/bulk-decision', () => {
    it('decides each item on its own and reports the others with their codes', async () => {
      const a = await ingestFlagged(ctx, agent);
      const b = await ingestFlagged(ctx, agent);
      const decided = await ingestFlagged(ctx, agent);
      const escalated = await ingestFlagged(ctx, agent);
      const theirs = await ingestFlagged(ctx, otherAgent);
      expect((await decide(owner.token, decided.reviewItemId, { decision: 'reject' })).statusCode).toBe(200);
      expect((await decide(owner.token, escalated.reviewItemId, { decision: 'escalate' })).statusCode).toBe(
        200,
      );
      const res = await ctx.post(`${QUEUE}/bulk-decision`, {
        token: member.token,
        body: {
          ids: [
            a.reviewItemId,
            decided.reviewItemId,
            b.reviewItemId,
            escalated.reviewItemId,
            theirs.reviewItemId,
            'nope',
            a.reviewItemId,
          ],
          decision: 'approve',
          notes: 'Batch',
        },
      });
      expect(res.statusCode, res.body).toBe(200);
      const data = res.json().data;
      expect(data.processed).toEqual([a.reviewItemId, b.reviewItemId]);
      expect(data.failed).toEqual([
        { id: decided.reviewItemId, code: 'ALREADY_DECIDED', error: expect.any(String) },
        { id: escalated.reviewItemId, code: 'FORBIDDEN', error: expect.any(String) },
        { id: theirs.reviewItemId, code: 'NOT_FOUND', error: expect.any(String) },
        { id: 'nope', code: 'NOT_FOUND', error: expect.any(String) },
      ]);
      expect(await traceStatus(a.traceId)).toBe('approved');
      expect(await traceStatus(b.traceId)).toBe('approved');
      expect(await traceStatus(escalated.traceId)).toBe('flagged');
    });

    it('takes 1 to 100 ids and refuses viewers', async () => {
      const { reviewItemId, traceId } = await ingestFlagged(ctx, agent);
      const bulk = (token: string, body: unknown) => ctx.post(`${QUEUE}/bulk-decision`, { token, body });
      expectErrorEnvelope(await bulk(owner.token, { ids: [], decision: 'approve' }), 400, 'VALIDATION_ERROR');
      expectErrorEnvelope(
        await bulk(owner.token, {
          ids: Array.from({ length: 101 }, () => reviewItemId),
          decision: 'approve',
        }),
        400,
        'VALIDATION_ERROR',
      );
      expectErrorEnvelope(await bulk(owner.token, { ids: [reviewItemId] }), 400, 'VALIDATION_ERROR');
      expectErrorEnvelope(
        await bulk(owner.token, { ids: [7], decision: 'approve' }),
        400,
        'VALIDATION_ERROR',
      );
      expectErrorEnvelope(
        await bulk(viewer.token, { ids: [reviewItemId], decision: 'approve' }),
        403,
        'FORBIDDEN',
      );
      expect(await traceStatus(traceId)).toBe('flagged');
      const hundred = await bulk(owner.token, {
        ids: Array.from({ length: 100 }, () => reviewItemId),
        decision: 'approve',
      });
      expect(hundred.statusCode, hundred.body).toBe(200);
      expect(hundred.json().data).toEqual({ processed: [reviewItemId], failed: [] });
    });
  });

  describe('PATCH /review-queue/:id/assign', () => {
    it('assigns to a member, lists by assignedTo=me, unassigns with null, and audits review.assigned', async () => {
      const { reviewItemId } = await ingestFlagged(ctx, agent);
      const assign = (token: string, assignedTo: unknown, id = reviewItemId) =>
        ctx.patch(`${QUEUE}/${id}/assign`, { token, body: { assignedTo } });
      const res = await assign(admin.token, member.userId);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data).toMatchObject({
        id: reviewItemId,
        assignedTo: member.userId,
        trace: expect.any(Object),
      });
      const mine = await ctx.get(QUEUE, { token: member.token, query: { assignedTo: 'me', limit: '100' } });
      expect((mine.json().data as { id: string }[]).map((i) => i.id)).toEqual([reviewItemId]);
      const byId = await ctx.get(QUEUE, {
        token: owner.token,
        query: { assignedTo: member.userId, limit: '100' },
      });
      expect((byId.json().data as { id: string }[]).map((i) => i.id)).toEqual([reviewItemId]);
      const audit = await auditEntriesOf(ctx, owner.organization.id, 'review.assigned', reviewItemId);
      expect(audit).toHaveLength(1);
      expect(audit[0]!.metadata).toMatchObject({ from: null, to: member.userId });

      expectErrorEnvelope(await assign(owner.token, other.user.id), 400, 'VALIDATION_ERROR');
      expectErrorEnvelope(await assign(owner.token, 'someone'), 400, 'VALIDATION_ERROR');
      expectErrorEnvelope(await assign(viewer.token, null), 403, 'FORBIDDEN');
      expectErrorEnvelope(await assign(other.token, null), 404, 'NOT_FOUND');
      const cleared = await assign(member.token, null);
      expect(cleared.statusCode, cleared.body).toBe(200);
      expect(cleared.json().data.assignedTo).toBeNull();
      const none = await ctx.get(QUEUE, { token: member.token, query: { assignedTo: 'me', limit: '100' } });
      expect(none.json().data).toEqual([]);
    });
  });
});
