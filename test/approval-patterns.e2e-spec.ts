import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DomainEvents } from '#platform';
import { type Registered, TestContext } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';
import { auditEntriesOf } from './support/audit-entries.js';
import {
  ingestFlagged,
  ingestManyFlagged,
  PATTERNS,
  QUEUE,
  refundFlagPolicy,
} from './support/review-suite.js';
import { TRACES, traceBody } from './support/traces-suite.js';

interface Pattern {
  id: string;
  agentId: string;
  action: string | null;
  policyIds: string[];
  status: string;
  observations: number;
  approvals: number;
  approvalRate: number | null;
}

describe('approval patterns', () => {
  let ctx: TestContext;
  let owner: Registered;
  let other: Registered;
  let member: { token: string };
  let admin: { token: string; userId: string };
  let policyId: string;

  beforeAll(async () => {
    ctx = await TestContext.create();
    owner = await ctx.register({ organizationName: 'Pattern owners' });
    other = await ctx.register({ organizationName: 'Pattern others' });
    member = await ctx.addMember(owner.organization.id, 'member');
    admin = await ctx.addMember(owner.organization.id, 'admin');
    policyId = await refundFlagPolicy(ctx, owner.organization.id, []);
  });
  afterAll(async () => ctx?.close());

  const bulk = async (ids: string[], decision: 'approve' | 'reject') => {
    const res = await ctx.post(`${QUEUE}/bulk-decision`, { token: member.token, body: { ids, decision } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.failed).toEqual([]);
  };
  const patternsOf = async (agentId: string): Promise<Pattern[]> => {
    const res = await ctx.get(PATTERNS, { token: owner.token, query: { agentId } });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data;
  };

  it('reaches pending_signoff at exactly the 50th observation with ≥ 95 % approvals, not at 49', async () => {
    const agent = await ctx.newAgent(owner.organization.id, 'Fifty');
    const items = await ingestManyFlagged(ctx, agent, 50);
    await bulk(
      items.slice(0, 2).map((i) => i.reviewItemId),
      'reject',
    );
    await bulk(
      items.slice(2, 49).map((i) => i.reviewItemId),
      'approve',
    );
    const [at49] = await patternsOf(agent.id);
    expect(at49).toMatchObject({
      agentId: agent.id,
      action: 'issue_refund',
      policyIds: [policyId],
      status: 'observing',
      observations: 49,
      approvals: 47,
    });
    await bulk([items[49]!.reviewItemId], 'approve');
    const [at50] = await patternsOf(agent.id);
    // 48 of 50 = 96 %.
    expect(at50).toMatchObject({
      id: at49!.id,
      status: 'pending_signoff',
      observations: 50,
      approvals: 48,
      approvalRate: 0.96,
    });
    expect(
      await auditEntriesOf(ctx, owner.organization.id, 'approval_pattern.pending_signoff', at50!.id),
    ).toHaveLength(1);
    const pending = await ctx.get(PATTERNS, { token: owner.token, query: { status: 'pending_signoff' } });
    expect((pending.json().data as Pattern[]).map((p) => p.id)).toContain(at50!.id);
  });

  it('stays observing at 50 observations with 94 % approvals', async () => {
    const agent = await ctx.newAgent(owner.organization.id, 'Ninety-four');
    const items = await ingestManyFlagged(ctx, agent, 50);
    await bulk(
      items.slice(0, 3).map((i) => i.reviewItemId),
      'reject',
    );
    await bulk(
      items.slice(3).map((i) => i.reviewItemId),
      'approve',
    );
    const [pattern] = await patternsOf(agent.id);
    expect(pattern).toMatchObject({
      status: 'observing',
      observations: 50,
      approvals: 47,
      approvalRate: 0.94,
    });
  });

  it('escalations are not observations; a different action is a different pattern', async () => {
    const agent = await ctx.newAgent(owner.organization.id, 'Two actions');
    const a = await ingestFlagged(ctx, agent, 'issue_refund');
    const b = await ingestFlagged(ctx, agent, 'deny_refund');
    const c = await ingestFlagged(ctx, agent, 'deny_refund');
    await bulk([a.reviewItemId, b.reviewItemId], 'approve');
    expect(
      (
        await ctx.post(`${QUEUE}/${c.reviewItemId}/decision`, {
          token: owner.token,
          body: { decision: 'escalate' },
        })
      ).statusCode,
    ).toBe(200);
    const patterns = await patternsOf(agent.id);
    expect(patterns.map((p) => [p.action, p.observations]).sort()).toEqual([
      ['deny_refund', 1],
      ['issue_refund', 1],
    ]);
  });

  it('signoff (owner or admin, only from pending_signoff) makes later flagged traces approved at ingestion; revoke undoes it', async () => {
    const agent = await ctx.newAgent(owner.organization.id, 'Auto');
    const items = await ingestManyFlagged(ctx, agent, 50);
    const early = await ctx.get(PATTERNS, { token: owner.token, query: { agentId: agent.id } });
    expect(early.json().data).toEqual([]);
    await bulk(
      items.slice(0, 10).map((i) => i.reviewItemId),
      'approve',
    );
    const [observing] = await patternsOf(agent.id);
    expectErrorEnvelope(
      await ctx.post(`${PATTERNS}/${observing!.id}/signoff`, { token: owner.token }),
      409,
      'PATTERN_STATE_CONFLICT',
    );
    await bulk(
      items.slice(10).map((i) => i.reviewItemId),
      'approve',
    );
    const [ready] = await patternsOf(agent.id);
    expect(ready!.status).toBe('pending_signoff');

    expectErrorEnvelope(
      await ctx.post(`${PATTERNS}/${ready!.id}/signoff`, { token: member.token }),
      403,
      'FORBIDDEN',
    );
    expectErrorEnvelope(
      await ctx.post(`${PATTERNS}/${ready!.id}/signoff`, { token: other.token }),
      404,
      'NOT_FOUND',
    );
    // Still awaiting signoff: a flagged trace goes to review.
    await ingestFlagged(ctx, agent);

    const signed = await ctx.post(`${PATTERNS}/${ready!.id}/signoff`, { token: admin.token });
    expect(signed.statusCode, signed.body).toBe(200);
    expect(signed.json().data).toMatchObject({ id: ready!.id, status: 'active', signedOffBy: admin.userId });
    expect(
      await auditEntriesOf(ctx, owner.organization.id, 'approval_pattern.signed_off', ready!.id),
    ).toHaveLength(1);

    const auto = await ctx.post(TRACES, {
      apiKey: agent.key,
      body: traceBody(
        { metadata: { ticket: 'T-1', autoApprovedBy: 'spoofed' } },
        { prompt: 'Please refund order 42' },
        { action: 'issue_refund' },
      ),
    });
    expect(auto.statusCode, auto.body).toBe(201);
    expect(auto.json().data).toMatchObject({ status: 'approved' });
    expect(auto.json().data.reviewItemId).toBeUndefined();
    const traceId = auto.json().data.id;
    const trace = (await ctx.get(`${TRACES}/${traceId}`, { token: owner.token })).json().data;
    expect(trace).toMatchObject({
      status: 'approved',
      reviewItemId: null,
      metadata: { ticket: 'T-1', autoApprovedBy: ready!.id },
      policyResults: [{ policyId, outcome: 'flag' }],
    });
    expect(await auditEntriesOf(ctx, owner.organization.id, 'trace.auto_approved', traceId)).toHaveLength(1);
    expect(await auditEntriesOf(ctx, owner.organization.id, 'trace.flagged', traceId)).toHaveLength(0);
    // The audit entry is the trace's event: trace.approved, with the pattern that approved it.
    const [entry] = await auditEntriesOf(ctx, owner.organization.id, 'trace.auto_approved', traceId);
    const event = await ctx.service(DomainEvents).get(owner.organization.id, entry!.id);
    expect(event).toMatchObject({
      type: 'trace.approved',
      agentId: agent.id,
      data: { traceId, status: 'approved', autoApprovedBy: ready!.id, reviewItemId: null },
    });

    // Another action of the same agent is another signature: still flagged.
    await ingestFlagged(ctx, agent, 'deny_refund');

    const revoked = await ctx.post(`${PATTERNS}/${ready!.id}/revoke`, { token: owner.token });
    expect(revoked.statusCode, revoked.body).toBe(200);
    expect(revoked.json().data).toMatchObject({
      status: 'observing',
      observations: 0,
      approvals: 0,
      signedOffBy: null,
    });
    await ingestFlagged(ctx, agent);
    expectErrorEnvelope(
      await ctx.post(`${PATTERNS}/${ready!.id}/revoke`, { token: owner.token }),
      409,
      'PATTERN_STATE_CONFLICT',
    );
  });

  it('a client cannot claim autoApprovedBy: a flagged trace stays flagged and loses the key', async () => {
    const agent = await ctx.newAgent(owner.organization.id, 'Spoof');
    const res = await ctx.post(TRACES, {
      apiKey: agent.key,
      body: traceBody({ metadata: { autoApprovedBy: 'f'.repeat(24) } }, { prompt: 'refund please' }),
    });
    expect(res.statusCode, res.body).toBe(202);
    const trace = (await ctx.get(`${TRACES}/${res.json().data.id}`, { token: owner.token })).json().data;
    expect(trace.metadata).toEqual({});
  });

  it('validates its query and ids', async () => {
    expectErrorEnvelope(
      await ctx.get(PATTERNS, { token: owner.token, query: { status: 'on' } }),
      400,
      'VALIDATION_ERROR',
    );
    expectErrorEnvelope(await ctx.post(`${PATTERNS}/nope/signoff`, { token: owner.token }), 404, 'NOT_FOUND');
    expectErrorEnvelope(
      await ctx.post(`${PATTERNS}/${'a'.repeat(24)}/revoke`, { token: owner.token }),
      404,
      'NOT_FOUND',
    );
    const theirs = await ctx.get(PATTERNS, { token: other.token });
    expect(theirs.json().data).toEqual([]);
  });
});
