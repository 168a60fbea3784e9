import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Registered, TestContext } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';
import type { TestAgent } from './support/builders.js';
import { CPI, INGEST, workspaceKey } from './support/cpi-suite.js';
import { auditEntriesOf } from './support/audit-entries.js';
import { eventsOf, ingestFlagged, QUEUE, refundFlagPolicy } from './support/review-suite.js';
import { TRACES } from './support/traces-suite.js';

interface Item {
  id: string;
  status: string;
  decision: string | null;
  resolution: string | null;
  notes: string | null;
  decidedBy: string | null;
  decidedAt: string | null;
}

/**
 * Human feedback (POST /cpi/ingest) on a trace whose review item is undecided closes the item in its transaction:
 * approved for an approval, rejected for a correction, with `resolution: 'feedback'`, audited and announced as a
 * completed review; a reviewer's decision afterwards is refused as for any decided item and leaves the trace alone.
 */
describe('feedback on a flagged trace closes its review item', () => {
  let ctx: TestContext;
  let owner: Registered;
  let other: Registered;
  let agent: TestAgent;
  let otherAgent: TestAgent;
  let key: { id: string; key: string };
  let member: { userId: string; token: string };

  beforeAll(async () => {
    ctx = await TestContext.create();
    owner = await ctx.register({ organizationName: 'Feedback and review' });
    other = await ctx.register({ organizationName: 'Elsewhere' });
    for (const org of [owner, other]) {
      await ctx.setPlan(org.organization.id, 'enterprise');
      await refundFlagPolicy(ctx, org.organization.id, []);
    }
    agent = await ctx.newAgent(owner.organization.id, 'Refund bot');
    otherAgent = await ctx.newAgent(other.organization.id, 'Other bot');
    key = await workspaceKey(ctx, owner);
    member = await ctx.addMember(owner.organization.id, 'member');
  });
  afterAll(async () => ctx?.close());

  const org = () => owner.organization.id;
  const feedback = (body: Record<string, unknown>) => ctx.post(INGEST, { apiKey: key.key, body });
  const decide = (id: string, decision: string, token = owner.token) =>
    ctx.post(`${QUEUE}/${id}/decision`, { token, body: { decision } });
  const trace = async (id: string) => (await ctx.get(`${TRACES}/${id}`, { token: owner.token })).json().data;
  const queue = async (status: string, token = owner.token) => {
    const res = await ctx.get(QUEUE, { token, query: { status, limit: '100' } });
    expect(res.statusCode, res.body).toBe(200);
    return { items: res.json().data as Item[], total: res.json().pagination.total as number };
  };
  const itemOf = async (status: string, id: string) => (await queue(status)).items.find((i) => i.id === id);
  const reviewAudits = async (id: string) =>
    (
      await Promise.all(
        ['review.approved', 'review.rejected', 'review.escalated'].map((t) =>
          auditEntriesOf(ctx, org(), t, id),
        ),
      )
    ).flat();
  const completions = async (id: string) =>
    (await eventsOf(ctx, org(), 'review.completed')).filter(
      (e) => (e.data as { reviewItemId: string }).reviewItemId === id,
    );
  const cpiTotals = async () => {
    const res = await ctx.get(CPI, { token: owner.token });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data.totals as Record<string, number>;
  };

  it('approve: the pending item leaves the queue as approved by feedback, audited and announced', async () => {
    const { traceId, reviewItemId } = await ingestFlagged(ctx, agent);
    const [pendingBefore, approvedBefore, cpiBefore] = [
      await queue('pending'),
      await queue('approved'),
      await cpiTotals(),
    ];
    expect(pendingBefore.items.map((i) => i.id)).toContain(reviewItemId);

    const res = await feedback({
      traceId,
      action: 'approve',
      userEmail: 'ana@example.com',
      feedbackNotes: 'Fine',
    });
    expect(res.statusCode, res.body).toBe(200);

    const pending = await queue('pending');
    expect(pending.items.map((i) => i.id)).not.toContain(reviewItemId);
    expect(pending.total).toBe(pendingBefore.total - 1);
    const approved = await queue('approved');
    expect(approved.total).toBe(approvedBefore.total + 1);
    const decidedAt = ctx.clock.now().toISOString();
    expect(approved.items.find((i) => i.id === reviewItemId)).toMatchObject({
      status: 'approved',
      decision: 'approve',
      resolution: 'feedback',
      notes: 'Fine',
      decidedBy: null,
      decidedAt,
    });
    expect(await trace(traceId)).toMatchObject({ status: 'success', humanOverride: false, reviewItemId });
    // The review decision and the feedback are one human verdict on one flag, an approval (a false flag).
    const cpi = await cpiTotals();
    expect(cpi.humanVerdicts).toBe(cpiBefore.humanVerdicts! + 1);
    expect(cpi.decidedFlags).toBe(cpiBefore.decidedFlags! + 1);
    expect(cpi.falseFlags).toBe(cpiBefore.falseFlags! + 1);
    expect(cpi.correctFlags).toBe(cpiBefore.correctFlags);

    const [cpiEntry] = await auditEntriesOf(ctx, org(), 'cpi.approved', traceId);
    expect(cpiEntry!.metadata).toMatchObject({ closedReviewItemId: reviewItemId });
    const audits = await reviewAudits(reviewItemId);
    expect(audits).toHaveLength(1);
    expect(audits[0]).toMatchObject({
      eventType: 'review.approved',
      actor: { type: 'api_key', id: key.id },
      metadata: {
        traceId,
        decision: 'approve',
        status: 'approved',
        traceStatus: 'success',
        resolution: 'feedback',
        decidedBy: null,
        decidedAt,
        feedback: {
          action: 'approve',
          apiKeyId: key.id,
          userEmail: 'ana@example.com',
          auditEntryId: cpiEntry!.id,
        },
      },
    });
    expect(audits[0]!.sequence).toBeGreaterThan(cpiEntry!.sequence);
    const events = await completions(reviewItemId);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      agentId: agent.id,
      data: { traceId, status: 'approved', resolution: 'feedback', traceStatus: 'success' },
    });
  });

  it('a decision afterwards is refused as for a decided item, and the trace does not move again', async () => {
    const { traceId, reviewItemId } = await ingestFlagged(ctx, agent);
    expect((await feedback({ traceId, correctedDecision: 'deny', feedbackNotes: 'No' })).statusCode).toBe(
      200,
    );
    const closed = await itemOf('rejected', reviewItemId);
    expect(closed).toMatchObject({ status: 'rejected', decision: 'reject', resolution: 'feedback' });
    const traceBefore = await trace(traceId);
    expect(traceBefore).toMatchObject({ status: 'success', humanOverride: true });

    // What a reviewer's decision leaves: the same answer to a later decision.
    const reviewed = await ingestFlagged(ctx, agent);
    expect((await decide(reviewed.reviewItemId, 'reject')).statusCode).toBe(200);
    const reference = expectErrorEnvelope(
      await decide(reviewed.reviewItemId, 'approve'),
      409,
      'ALREADY_DECIDED',
    );

    ctx.clock.advance(60_000);
    for (const decision of ['approve', 'reject', 'escalate']) {
      const body = expectErrorEnvelope(await decide(reviewItemId, decision), 409, 'ALREADY_DECIDED');
      if (decision === 'approve') expect(body).toEqual(reference);
    }
    const bulk = await ctx.post(`${QUEUE}/bulk-decision`, {
      token: member.token,
      body: { ids: [reviewItemId], decision: 'approve' },
    });
    expect(bulk.statusCode, bulk.body).toBe(200);
    expect(bulk.json().data).toEqual({
      processed: [],
      failed: [{ id: reviewItemId, code: 'ALREADY_DECIDED', error: reference.error }],
    });

    expect(await trace(traceId)).toEqual(traceBefore);
    expect(await itemOf('rejected', reviewItemId)).toEqual(closed);
    expect(await reviewAudits(reviewItemId)).toHaveLength(1);
    expect(await completions(reviewItemId)).toHaveLength(1);
  });

  it('closes an escalated item too, so that an owner deciding it later cannot move the trace', async () => {
    const { traceId, reviewItemId } = await ingestFlagged(ctx, agent);
    expect((await decide(reviewItemId, 'escalate', member.token)).statusCode).toBe(200);
    const escalatedBefore = await queue('escalated');
    expect((await feedback({ traceId, action: 'approve' })).statusCode).toBe(200);
    const escalated = await queue('escalated');
    expect(escalated.items.map((i) => i.id)).not.toContain(reviewItemId);
    expect(escalated.total).toBe(escalatedBefore.total - 1);
    expect(await itemOf('approved', reviewItemId)).toMatchObject({ resolution: 'feedback', decidedBy: null });
    expectErrorEnvelope(await decide(reviewItemId, 'reject'), 409, 'ALREADY_DECIDED');
    expect((await trace(traceId)).status).toBe('success');
    expect((await reviewAudits(reviewItemId)).map((a) => a.eventType).sort()).toEqual([
      'review.approved',
      'review.escalated',
    ]);
  });

  it('leaves an item a reviewer decided as it was; the feedback still moves the trace', async () => {
    const { traceId, reviewItemId } = await ingestFlagged(ctx, agent);
    expect((await decide(reviewItemId, 'reject')).statusCode).toBe(200);
    const decided = await itemOf('rejected', reviewItemId);
    expect(decided).toMatchObject({ resolution: 'review', decidedBy: owner.user.id });
    ctx.clock.advance(60_000);
    expect((await feedback({ traceId, action: 'approve' })).statusCode).toBe(200);
    expect((await trace(traceId)).status).toBe('success');
    expect(await itemOf('rejected', reviewItemId)).toEqual(decided);
    expect(await reviewAudits(reviewItemId)).toHaveLength(1);
    expect(await completions(reviewItemId)).toHaveLength(1);
    const [cpiEntry] = await auditEntriesOf(ctx, org(), 'cpi.approved', traceId);
    expect(cpiEntry!.metadata).toMatchObject({ closedReviewItemId: null });
  });

  it('of feedback and a decision sent together, exactly one closes the item, without a deadlock', async () => {
    for (let round = 0; round < 4; round++) {
      const { traceId, reviewItemId } = await ingestFlagged(ctx, agent);
      const [decision, given] = await Promise.all([
        decide(reviewItemId, 'reject'),
        feedback({ traceId, action: 'approve' }),
      ]);
      expect(given.statusCode, given.body).toBe(200);
      expect([200, 409], decision.body).toContain(decision.statusCode);
      const audits = await reviewAudits(reviewItemId);
      expect(audits).toHaveLength(1);
      expect(await completions(reviewItemId)).toHaveLength(1);
      const item = (await itemOf('approved', reviewItemId)) ?? (await itemOf('rejected', reviewItemId));
      // The decision won when it answered 200; else the feedback closed the item first.
      expect(item!.resolution).toBe(decision.statusCode === 200 ? 'review' : 'feedback');
      expect((await trace(traceId)).status).toBe('success');
    }
  });

  it('never closes another organization’s item: feedback on its trace is 404 and its item stays pending', async () => {
    const theirs = await ingestFlagged(ctx, otherAgent);
    expectErrorEnvelope(await feedback({ traceId: theirs.traceId, action: 'approve' }), 404, 'NOT_FOUND');
    const res = await ctx.get(QUEUE, { token: other.token, query: { limit: '100' } });
    expect((res.json().data as Item[]).find((i) => i.id === theirs.reviewItemId)).toMatchObject({
      status: 'pending',
      resolution: null,
    });
  });
});
