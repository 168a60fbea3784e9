import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { traces } from '../libs/governance/src/traces/trace.schema.js';
import { type Registered, TestContext } from './support/app.js';
import { KEYS } from './support/api-keys-suite.js';
import { expectErrorEnvelope } from './support/assertions.js';
import type { TestAgent } from './support/builders.js';
import { INGEST, ingestDecision, workspaceKey } from './support/cpi-suite.js';
import { pdfText } from './support/pdf.js';
import {
  ingestFlagged,
  ingestManyFlagged,
  PATTERNS,
  QUEUE,
  refundFlagPolicy,
} from './support/review-suite.js';
import { TRACES, traceBody } from './support/traces-suite.js';

const START = '2026-03-02T09:00:00.000Z';
const ORG = '/api/v1/organizations/current';
const CONTACT = 'Appeals team, Acme Lending, 1 Harbour Street, Dublin, or appeals@acmelending.example';
const explanationOf = (id: string) => `${TRACES}/${id}/explanation`;
/** A trace that mentions no refund (the flag policy of the review suites matches those). */
const loanBody = (over: Record<string, unknown> = {}, input = {}, output = {}) =>
  traceBody(over, { prompt: 'May I borrow 5,000 EUR over two years?', ...input }, output);

/**
 * GET /traces/:id/explanation (EU AI Act art. 86), JSON and PDF: docs/compliance-officers.md, "Explaining a decision
 * (art. 86)". Each expected value is written out by hand from what the test did.
 */
describe('the explanation of a decision', () => {
  let ctx: TestContext;
  let owner: Registered;
  let other: Registered;
  let member: { token: string; userId: string; email: string };
  let admin: { token: string; userId: string; email: string };
  let viewer: { token: string };
  let agent: TestAgent;
  let otherAgent: TestAgent;
  let refundPolicyId: string;
  let cardPolicyId: string;
  let writableKey: { key: string };

  const agentView = () => ({
    id: agent.id,
    name: 'Loan assistant',
    description: 'Pre-screens consumer loan applications',
  });
  const now = () => ctx.clock.now().toISOString();

  async function explain(id: string, auth: { token?: string; apiKey?: string } = { token: owner.token }) {
    const res = await ctx.get(explanationOf(id), auth);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.json().success).toBe(true);
    return { data: res.json().data, body: res.body };
  }

  async function ingest(body: Record<string, unknown>, status: number, key = agent.key): Promise<string> {
    const res = await ctx.post(TRACES, { apiKey: key, body });
    expect(res.statusCode, res.body).toBe(status);
    return res.json().data.id;
  }

  async function decide(reviewItemId: string, token: string, body: Record<string, unknown>) {
    const res = await ctx.post(`${QUEUE}/${reviewItemId}/decision`, { token, body });
    expect(res.statusCode, res.body).toBe(200);
  }

  async function setContact(contestContact: string | null, token = owner.token) {
    const res = await ctx.patch(ORG, { token, body: { contestContact } });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data;
  }

  /** What the subject's erasure leaves of a trace (contract-decisions §19): the skeleton, without content. */
  async function erase(id: string): Promise<void> {
    await ctx.db.db
      .update(traces)
      .set({
        erasedAt: ctx.clock.now(),
        inputContext: null,
        outputDecision: null,
        metadata: null,
        contentSalt: null,
      })
      .where(eq(traces.id, id));
  }

  beforeAll(async () => {
    ctx = await TestContext.create({ now: START });
    owner = await ctx.register({ organizationName: 'Acme Lending' });
    // Feedback (POST /cpi/ingest) needs the enterprise plan; explanations need none.
    await ctx.setPlan(owner.organization.id, 'enterprise');
    other = await ctx.register({ organizationName: 'Elsewhere Bank' });
    member = await ctx.addMember(owner.organization.id, 'member');
    admin = await ctx.addMember(owner.organization.id, 'admin');
    viewer = await ctx.addMember(owner.organization.id, 'viewer');
    const created = await ctx.post('/api/v1/agents', {
      token: owner.token,
      body: { name: 'Loan assistant', description: 'Pre-screens consumer loan applications' },
    });
    expect(created.statusCode, created.body).toBe(201);
    agent = { id: created.json().data.id, key: created.json().data.apiKey };
    otherAgent = await ctx.newAgent(other.organization.id, 'Other agent');
    refundPolicyId = await refundFlagPolicy(ctx, owner.organization.id, []);
    const card = await ctx.post('/api/v1/policies', {
      token: owner.token,
      body: { templateId: 'payment-card-in-output' },
    });
    expect(card.statusCode, card.body).toBe(201);
    cardPolicyId = card.json().data.id;
    writableKey = await workspaceKey(ctx, owner);
  });
  afterAll(async () => ctx?.close());

  it('explains an approved decision that no policy matched', async () => {
    const id = await ingest(loanBody({ confidence: 0.9 }), 201);
    const { data } = await explain(id);
    expect(data).toEqual({
      traceId: id,
      agent: agentView(),
      decision: { status: 'approved', confidence: 0.9, madeAt: START },
      policies: [],
      humanReview: null,
      autoApprovedBy: null,
      corrections: [],
      contact: null,
      erasedAt: null,
    });
  });

  it('a flagged decision a member approved: the member’s role, the time and the notes, never who they are', async () => {
    const { traceId, reviewItemId } = await ingestFlagged(ctx, agent);
    const madeAt = now();
    ctx.clock.advance(90_000);
    await decide(reviewItemId, member.token, {
      decision: 'approve',
      notes: 'Order 42 checked with the customer',
    });
    const { data, body } = await explain(traceId);
    expect(data).toEqual({
      traceId,
      agent: agentView(),
      decision: { status: 'approved', confidence: 0.9, madeAt },
      policies: [
        {
          policyId: refundPolicyId,
          name: 'Refunds need a human',
          outcome: 'flag',
          explanation: 'The request contained “refund”.',
        },
      ],
      humanReview: {
        decision: 'approved',
        decidedAt: now(),
        reviewerRole: 'member',
        notes: 'Order 42 checked with the customer',
        via: 'review',
      },
      autoApprovedBy: null,
      corrections: [],
      contact: null,
      erasedAt: null,
    });
    expect(body).not.toContain(member.email);
    expect(body).not.toContain(member.userId);

    // Erased: the skeleton still explains it (status, policies, review).
    await erase(traceId);
    const erased = (await explain(traceId)).data;
    expect(erased).toEqual({ ...data, erasedAt: now() });
  });

  it('a flagged decision an admin rejected: the decision is blocked, the review says rejected', async () => {
    const { traceId, reviewItemId } = await ingestFlagged(ctx, agent, 'deny_refund');
    ctx.clock.advance(60_000);
    await decide(reviewItemId, admin.token, { decision: 'reject' });
    const { data, body } = await explain(traceId, { token: viewer.token });
    expect(data.decision).toMatchObject({ status: 'blocked', confidence: 0.9 });
    expect(data.policies).toEqual([
      {
        policyId: refundPolicyId,
        name: 'Refunds need a human',
        outcome: 'flag',
        explanation: 'The request contained “refund”.',
      },
    ]);
    expect(data.humanReview).toEqual({
      decision: 'rejected',
      decidedAt: now(),
      reviewerRole: 'admin',
      notes: null,
      via: 'review',
    });
    expect(body).not.toContain(admin.email);
  });

  it('a decision a policy blocked: the policy’s condition in plain words', async () => {
    const id = await ingest(
      loanBody({ confidence: 0.85 }, {}, { text: 'Card 4111 1111 1111 1111 is on file.' }),
      403,
    );
    const { data } = await explain(id);
    expect(data).toEqual({
      traceId: id,
      agent: agentView(),
      decision: { status: 'blocked', confidence: 0.85, madeAt: now() },
      policies: [
        {
          policyId: cardPolicyId,
          name: 'Payment-card number in output',
          outcome: 'block',
          explanation: 'The output contained a payment-card number.',
        },
      ],
      humanReview: null,
      autoApprovedBy: null,
      corrections: [],
      contact: null,
      erasedAt: null,
    });
  });

  it('says when the policy was edited after the decision, and when it was deleted', async () => {
    const created = await ctx.post('/api/v1/policies', {
      token: owner.token,
      body: { templateId: 'email-in-output' },
    });
    expect(created.statusCode, created.body).toBe(201);
    const policyId = created.json().data.id;
    const id = await ingest(loanBody({}, {}, { text: 'Write to ana@example.com for the form.' }), 202);
    const policy = (explanation: string) => [
      { policyId, name: 'E-mail address in output', outcome: 'flag', explanation },
    ];
    const pending = (await explain(id)).data;
    expect(pending).toMatchObject({ decision: { status: 'flagged' }, humanReview: null });
    expect(pending.policies).toEqual(policy('The output contained an e-mail address.'));

    ctx.clock.advance(60_000);
    const edited = await ctx.patch(`/api/v1/policies/${policyId}`, {
      token: owner.token,
      body: { description: 'Edited after the decision' },
    });
    expect(edited.statusCode, edited.body).toBe(200);
    expect((await explain(id)).data.policies).toEqual(
      policy(
        'The output contained an e-mail address. (The organization edited this rule after the decision: these ' +
          'are its conditions now, which may differ from those applied then.)',
      ),
    );

    expect((await ctx.delete(`/api/v1/policies/${policyId}`, { token: owner.token })).statusCode).toBe(200);
    expect((await explain(id)).data.policies).toEqual(
      policy('The organization has since deleted this rule, so its conditions can no longer be shown.'),
    );
  });

  it('a decision an approval pattern approved: the pattern, and no human review; still so once erased', async () => {
    const desk = await ctx.newAgent(owner.organization.id, 'Refund desk');
    const items = await ingestManyFlagged(ctx, desk, 50);
    const bulk = await ctx.post(`${QUEUE}/bulk-decision`, {
      token: member.token,
      body: { ids: items.map((i) => i.reviewItemId), decision: 'approve' },
    });
    expect(bulk.statusCode, bulk.body).toBe(200);
    const patterns = await ctx.get(PATTERNS, { token: owner.token, query: { agentId: desk.id } });
    const [pattern] = patterns.json().data;
    expect(pattern).toMatchObject({ status: 'pending_signoff', observations: 50 });
    const signed = await ctx.post(`${PATTERNS}/${pattern.id}/signoff`, { token: owner.token });
    expect(signed.statusCode, signed.body).toBe(200);

    ctx.clock.advance(60_000);
    const id = await ingest(
      traceBody({}, { prompt: 'Please refund order 43' }, { action: 'issue_refund' }),
      201,
      desk.key,
    );
    const { data } = await explain(id);
    expect(data).toEqual({
      traceId: id,
      agent: { id: desk.id, name: 'Refund desk', description: null },
      decision: { status: 'approved', confidence: 0.9, madeAt: now() },
      policies: [
        {
          policyId: refundPolicyId,
          name: 'Refunds need a human',
          outcome: 'flag',
          explanation: 'The request contained “refund”.',
        },
      ],
      humanReview: null,
      autoApprovedBy: pattern.id,
      corrections: [],
      contact: null,
      erasedAt: null,
    });
    const pdf = await ctx.get(explanationOf(id), { token: owner.token, query: { format: 'pdf' } });
    expect(pdf.statusCode).toBe(200);
    expect((await pdfText(pdf.rawPayload)).text).toContain('It was approved automatically');

    // The metadata that named the pattern goes with the content; the ingestion's audit entry still names it.
    ctx.clock.advance(60_000);
    await erase(id);
    expect((await explain(id)).data).toEqual({ ...data, erasedAt: now() });
  });

  it('a correction given after the fact (CPI feedback), without the e-mail of who gave it', async () => {
    const id = await ingestDecision(ctx, agent, 'deny', 0.8);
    ctx.clock.advance(3_600_000);
    const res = await ctx.post(INGEST, {
      apiKey: writableKey.key,
      body: {
        traceId: id,
        action: 'correct',
        correctedDecision: { decision: 'approve', confidence: 0.95 },
        feedbackNotes: 'Proof of income arrived after the decision',
        userEmail: 'ana.reviewer@acme-lending.example',
      },
    });
    expect(res.statusCode, res.body).toBe(200);
    const { data, body } = await explain(id);
    expect(data.decision).toMatchObject({ status: 'success', confidence: 0.8 });
    expect(data.humanReview).toBeNull();
    expect(data.corrections).toEqual([
      {
        action: 'correct',
        at: now(),
        originalDecision: 'deny',
        correctedDecision: 'approve',
        originalConfidence: 0.8,
        correctedConfidence: 0.95,
        notes: 'Proof of income arrived after the decision',
      },
    ]);
    expect(body).not.toContain('ana.reviewer@acme-lending.example');
  });

  it('names the contact the organization set, and none once it is cleared', async () => {
    const id = await ingest(loanBody(), 201);
    const set = await setContact(`  ${CONTACT}  `, admin.token);
    expect(set.contestContact).toBe(CONTACT);
    const current = await ctx.get(ORG, { token: viewer.token });
    expect(current.json().data.contestContact).toBe(CONTACT);
    expect((await explain(id)).data.contact).toBe(CONTACT);

    const audit = await ctx.get('/api/v1/audit', {
      token: owner.token,
      query: { eventType: 'organization.updated' },
    });
    expect(audit.json().data[0]).toMatchObject({
      actor: { type: 'user', id: admin.userId },
      metadata: { changes: { contestContact: { from: null, to: CONTACT } } },
    });

    expect((await setContact(null)).contestContact).toBeNull();
    expect((await explain(id)).data.contact).toBeNull();
  });

  it('renders a PDF for the person concerned with the agent, the decision, the rule and the contact', async () => {
    await setContact(CONTACT);
    const id = await ingest(
      loanBody({ confidence: 0.85 }, {}, { text: 'Card 4111 1111 1111 1111 is on file.' }),
      403,
    );
    const res = await ctx.get(explanationOf(id), { token: viewer.token, query: { format: 'pdf' } });
    expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
    expect(res.headers['content-type']).toBe('application/pdf');
    expect(res.headers['content-disposition']).toBe(`attachment; filename="decision-explanation-${id}.pdf"`);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.rawPayload.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    const pdf = await pdfText(res.rawPayload);
    expect(pdf.title).toBe('Explanation of a decision: Acme Lending');
    expect(pdf.language).toBe('en');
    for (const text of [
      'How a decision about you was made',
      'The decision was made with “Loan assistant”.',
      'Its purpose, as the organization describes it: “Pre-screens consumer loan applications”.',
      'Outcome: Refused (blocked).',
      'The system’s confidence in its decision: 85%',
      'The rule “Payment-card number in output”: The output contained a payment-card number. Under this rule such ' +
        'a decision is refused.',
      'No person reviewed this decision before it took effect.',
      CONTACT,
      `Reference of the decision: ${id}.`,
    ]) {
      expect(pdf.text).toContain(text);
    }
    // The content itself is not repeated, and nobody's e-mail is in it.
    expect(pdf.text).not.toContain('4111');
    expect(pdf.text).not.toContain(owner.user.email);
  });

  it('a workspace key reads it within its scope only; another organization, a malformed or unknown id get 404', async () => {
    const id = await ingest(loanBody(), 201);
    const readOnly = await workspaceKey(ctx, owner, true);
    expect((await explain(id, { apiKey: readOnly.key })).data.traceId).toBe(id);
    const desk = await ctx.newAgent(owner.organization.id, 'Scoped desk');
    const scoped = await ctx.post(KEYS, {
      token: owner.token,
      body: { name: 'Desk only', scope: { agentIds: [desk.id], readOnly: true } },
    });
    expect(scoped.statusCode, scoped.body).toBe(201);
    expectErrorEnvelope(
      await ctx.get(explanationOf(id), { apiKey: scoped.json().data.key }),
      404,
      'NOT_FOUND',
    );

    expectErrorEnvelope(await ctx.get(explanationOf(id), { token: other.token }), 404, 'NOT_FOUND');
    const theirs = await ingest(loanBody(), 201, otherAgent.key);
    expectErrorEnvelope(await ctx.get(explanationOf(theirs), { token: owner.token }), 404, 'NOT_FOUND');
    expectErrorEnvelope(
      await ctx.get(explanationOf('f'.repeat(24)), { token: owner.token }),
      404,
      'NOT_FOUND',
    );
    // A malformed id answers as GET /traces/:id does.
    const malformed = await ctx.get(`${TRACES}/not-an-id`, { token: owner.token });
    expect(malformed.statusCode).toBe(404);
    expectErrorEnvelope(await ctx.get(explanationOf('not-an-id'), { token: owner.token }), 404, 'NOT_FOUND');
    const badFormat = await ctx.get(explanationOf(id), { token: owner.token, query: { format: 'xml' } });
    expectErrorEnvelope(badFormat, 400, 'VALIDATION_ERROR');
    expectErrorEnvelope(await ctx.get(explanationOf(id)), 401, 'UNAUTHORIZED');
  });
});

describe('PATCH /organizations/current {contestContact}', () => {
  let ctx: TestContext;
  let owner: Registered;

  beforeAll(async () => {
    ctx = await TestContext.create();
    owner = await ctx.register({ organizationName: 'Contact Ltd' });
  });
  afterAll(async () => ctx?.close());

  const current = async () => (await ctx.get(ORG, { token: owner.token })).json().data;
  const updates = async () =>
    (
      await ctx.get('/api/v1/audit', { token: owner.token, query: { eventType: 'organization.updated' } })
    ).json().data.length;

  it('accepts 500 characters; refuses 501, an empty text and a number with 400 VALIDATION_ERROR, nothing changed', async () => {
    expect(
      (await ctx.patch(ORG, { token: owner.token, body: { contestContact: 'a'.repeat(500) } })).statusCode,
    ).toBe(200);
    const before = await current();
    const audited = await updates();
    // U+2764 U+FE0F: two characters to PostgreSQL, which class-validator's length would count as one.
    for (const contestContact of ['a'.repeat(501), `${'a'.repeat(499)}\u2764\uFE0F`, '   ', 42]) {
      const res = await ctx.patch(ORG, { token: owner.token, body: { contestContact } });
      const body = expectErrorEnvelope(res, 400, 'VALIDATION_ERROR');
      expect(body.details).toEqual([{ field: 'contestContact', message: expect.any(String) }]);
    }
    expect(await current()).toEqual(before);
    expect(await updates()).toBe(audited);
  });

  it('refuses a member and a viewer with 403; GET /organizations/current shows it to every role', async () => {
    await ctx.patch(ORG, { token: owner.token, body: { contestContact: CONTACT } });
    for (const role of ['member', 'viewer'] as const) {
      const { token } = await ctx.addMember(owner.organization.id, role);
      expectErrorEnvelope(await ctx.patch(ORG, { token, body: { contestContact: 'x' } }), 403, 'FORBIDDEN');
      expect((await ctx.get(ORG, { token })).json().data.contestContact).toBe(CONTACT);
    }
  });
});
