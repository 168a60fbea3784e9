import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Registered, TestContext } from './support/app.js';
import type { TestAgent } from './support/builders.js';
import { INGEST, ingestDecision, workspaceKey } from './support/cpi-suite.js';
import { auditEntriesOf } from './support/audit-entries.js';
import { eventsOf } from './support/review-suite.js';
import { TRACES } from './support/traces-suite.js';

describe('POST /cpi/ingest', () => {
  let ctx: TestContext;
  let owner: Registered;
  let other: Registered;
  let agent: TestAgent;
  let otherAgent: TestAgent;
  let key: { id: string; key: string };
  let otherKey: { id: string; key: string };

  beforeAll(async () => {
    ctx = await TestContext.create();
    owner = await ctx.register({ organizationName: 'Feedback' });
    other = await ctx.register({ organizationName: 'Elsewhere' });
    await ctx.setPlan(owner.organization.id, 'enterprise');
    await ctx.setPlan(other.organization.id, 'enterprise');
    agent = await ctx.newAgent(owner.organization.id, 'Returns bot');
    otherAgent = await ctx.newAgent(other.organization.id, 'Other bot');
    key = await workspaceKey(ctx, owner);
    otherKey = await workspaceKey(ctx, other);
  });
  afterAll(async () => ctx?.close());

  const submit = (body: unknown, apiKey = key.key) => ctx.post(INGEST, { apiKey, body });
  const trace = async (id: string) => (await ctx.get(`${TRACES}/${id}`, { token: owner.token })).json().data;

  it('approve: the decision stands, status success, humanOverride false, approver recorded', async () => {
    const id = await ingestDecision(ctx, agent, 'deny');
    const res = await submit({ traceId: id, action: 'approve', userEmail: 'ana@example.com' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toEqual({
      traceId: id,
      status: 'success',
      humanOverride: false,
      action: 'approve',
    });
    const t = await trace(id);
    expect(t.status).toBe('success');
    expect(t.humanOverride).toBe(false);
    expect(t.outputDecision.action).toBe('deny');
    expect(t.metadata.approvedBy).toBe('ana@example.com');
    expect(t.metadata.approvedAt).toBe(ctx.clock.now().toISOString());
    const [audit] = await auditEntriesOf(ctx, owner.organization.id, 'cpi.approved', id);
    expect(audit!.metadata).toMatchObject({
      action: 'approve',
      userEmail: 'ana@example.com',
      previousDecision: 'deny',
    });
    const events = (await eventsOf(ctx, owner.organization.id, 'cpi.approved')).filter(
      (e) => (e.data as { traceId: string }).traceId === id,
    );
    expect(events).toHaveLength(1);
    expect(events[0]!.data).toEqual({
      traceId: id,
      agentId: agent.id,
      action: 'approve',
      humanOverride: false,
      userEmail: 'ana@example.com',
    });
  });

  it('approve without an e-mail names the workspace key as approver', async () => {
    const id = await ingestDecision(ctx, agent);
    expect((await submit({ traceId: id, action: 'approve' })).statusCode).toBe(200);
    expect((await trace(id)).metadata.approvedBy).toBe(`apiKey:${key.id}`);
  });

  it('correct: decision replaced, original kept, notes, marker once; repeating keeps the true original', async () => {
    const id = await ingestDecision(ctx, agent, 'deny', 0.8);
    const first = await submit({
      traceId: id,
      action: 'correct',
      correctedDecision: 'refund',
      feedbackNotes: 'Policy allows it',
      userEmail: 'bo@example.com',
    });
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json().data).toEqual({
      traceId: id,
      status: 'success',
      humanOverride: true,
      action: 'correct',
    });
    let t = await trace(id);
    expect(t.status).toBe('success');
    expect(t.humanOverride).toBe(true);
    expect(t.confidence).toBe(0.8);
    expect(t.outputDecision).toMatchObject({
      decision: 'refund',
      originalDecision: 'deny',
      correctionNotes: 'Policy allows it',
    });
    expect(t.rationale).toBe('[Human correction] Outside the window');

    // correctedDecision alone implies correct.
    const second = await submit({ traceId: id, correctedDecision: 'exchange', feedbackNotes: 'Better' });
    expect(second.statusCode, second.body).toBe(200);
    expect(second.json().data.action).toBe('correct');
    t = await trace(id);
    expect(t.outputDecision).toMatchObject({
      decision: 'exchange',
      originalDecision: 'deny',
      correctionNotes: 'Better',
    });
    expect(t.rationale).toBe('[Human correction] Outside the window');
    const audits = await auditEntriesOf(ctx, owner.organization.id, 'cpi.corrected', id);
    expect(audits).toHaveLength(2);
    expect(audits.map((a) => (a.metadata as { correctedDecision: string }).correctedDecision).sort()).toEqual(
      ['exchange', 'refund'],
    );
    expect(
      audits.find((a) => (a.metadata as { correctedDecision: string }).correctedDecision === 'refund')!
        .metadata,
    ).toMatchObject({ previousDecision: 'deny', hasNotes: true, userEmail: 'bo@example.com' });
    const events = (await eventsOf(ctx, owner.organization.id, 'cpi.corrected')).filter(
      (e) => (e.data as { traceId: string }).traceId === id,
    );
    expect(events).toHaveLength(2);
    expect(events[0]!.agentId).toBe(agent.id);
  });

  it('correct by object carries the corrected confidence, the trace keeps the agent’s', async () => {
    const id = await ingestDecision(ctx, agent, 'deny', 0.55);
    const res = await submit({ traceId: id, correctedDecision: { decision: 'refund', confidence: 0.95 } });
    expect(res.statusCode, res.body).toBe(200);
    const t = await trace(id);
    expect(t.confidence).toBe(0.55);
    expect(t.outputDecision).toMatchObject({
      decision: 'refund',
      originalDecision: 'deny',
      correctedConfidence: 0.95,
    });
  });

  it('re-indexes the similarity text with the corrected decision after the response', async () => {
    const id = await ingestDecision(ctx, agent, 'deny', 0.7, 'Blender zigzagquux return');
    expect((await submit({ traceId: id, correctedDecision: 'xylophonerefund' })).statusCode).toBe(200);
    const { traces } = await import('../libs/governance/src/traces/trace.schema.js');
    const { eq } = await import('drizzle-orm');
    let text = '';
    for (let i = 0; i < 50 && !text.includes('xylophonerefund'); i++) {
      await new Promise((r) => setTimeout(r, 20));
      const [row] = await ctx.db.db.select({ s: traces.searchText }).from(traces).where(eq(traces.id, id));
      text = row!.s;
    }
    expect(text).toContain('xylophonerefund');
    expect(text).toContain('Blender zigzagquux return');
  });

  it.each([
    ['neither action nor correctedDecision', {}],
    ['approve with a correctedDecision', { action: 'approve', correctedDecision: 'x' }],
    ['correct without correctedDecision', { action: 'correct' }],
    ['unknown action', { action: 'reject', correctedDecision: 'x' }],
    ['empty correctedDecision', { correctedDecision: '' }],
    ['too long correctedDecision', { correctedDecision: 'x'.repeat(201) }],
    ['object without decision', { correctedDecision: { confidence: 0.5 } }],
    ['confidence above 1', { correctedDecision: { decision: 'x', confidence: 1.5 } }],
    ['array decision', { correctedDecision: ['x'] }],
    ['notes too long', { correctedDecision: 'x', feedbackNotes: 'n'.repeat(4001) }],
    ['bad e-mail', { correctedDecision: 'x', userEmail: 'not-an-email' }],
  ])('400 VALIDATION_ERROR: %s, and the trace is unchanged', async (_name, body) => {
    const id = await ingestDecision(ctx, agent, 'deny');
    const res = await submit({ traceId: id, ...body });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().code).toBe('VALIDATION_ERROR');
    const t = await trace(id);
    expect(t.status).not.toBe('success');
    expect(t.outputDecision.action).toBe('deny');
  });

  it('400 without traceId', async () => {
    const res = await submit({ action: 'approve' });
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('VALIDATION_ERROR');
  });

  it('404 NOT_FOUND for another organization’s trace, an unknown id and a malformed id', async () => {
    const foreign = await ingestDecision(ctx, otherAgent, 'deny');
    for (const traceId of [foreign, 'a'.repeat(24), 'nope']) {
      const res = await submit({ traceId, action: 'approve' });
      expect(res.statusCode, res.body).toBe(404);
      expect(res.json().code).toBe('NOT_FOUND');
    }
    const res = await submit({ traceId: foreign, action: 'approve' }, otherKey.key);
    expect(res.statusCode).toBe(200);
  });

  it('403 FORBIDDEN for a JWT, an agent key and a read-only workspace key', async () => {
    const id = await ingestDecision(ctx, agent);
    const body = { traceId: id, action: 'approve' };
    const jwt = await ctx.post(INGEST, { token: owner.token, body });
    const agentKey = await ctx.post(INGEST, { apiKey: agent.key, body });
    const readOnly = await submit(body, (await workspaceKey(ctx, owner, true)).key);
    for (const res of [jwt, agentKey, readOnly]) {
      expect(res.statusCode, res.body).toBe(403);
      expect(res.json().code).toBe('FORBIDDEN');
    }
    expect((await trace(id)).status).not.toBe('success');
  });

  it('403 UPGRADE_REQUIRED on a plan without cpiFeedbackIngest', async () => {
    const free = await ctx.register({ organizationName: 'Small' });
    const freeAgent = await ctx.newAgent(free.organization.id, 'Bot');
    const freeKey = await workspaceKey(ctx, free);
    const id = await ingestDecision(ctx, freeAgent);
    const res = await submit({ traceId: id, action: 'approve' }, freeKey.key);
    expect(res.statusCode, res.body).toBe(403);
    // The platform's feature gate answers 403 with UPGRADE_REQUIRED.
    expect(res.json().code).toBe('UPGRADE_REQUIRED');
  });
});
