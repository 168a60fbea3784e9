import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Registered, replicaContext, TestContext } from './support/app.js';
import type { TestAgent } from './support/builders.js';
import { CPI, INGEST, workspaceKey } from './support/cpi-suite.js';
import { QUEUE, refundFlagPolicy } from './support/review-suite.js';
import { TRACES, traceBody } from './support/traces-suite.js';

const ANALYTICS = `${CPI}/analytics`;
const NOW = '2026-06-10T12:00:00.000Z';

/** The 30 UTC days of the trend ending on `last`, oldest first. */
function trendDays(last: string): string[] {
  const end = Date.parse(`${last}T00:00:00.000Z`);
  return Array.from({ length: 30 }, (_, i) => new Date(end - (29 - i) * 86_400_000).toISOString().slice(0, 10));
}

/**
 * The fixture, in time order (NOW is 2026-06-10 12:00 UTC; a refund prompt is flagged). Current status and
 * confidence of each trace, and its verdicts:
 *   a1 06-07 10:00 flagged 0.4, review approve 10:30                          → approved   (false flag)
 *   a2 06-07 11:00 flagged 0.2, review reject 06-08 09:30                     → blocked    (correct flag)
 *   a3 06-07 12:00 flagged 0.3, correct {deny, 0.9} 12:30 "Wrong policy cited" (which closes its review item,
 *                  rejected), again 13:00                                      → success    (correct flag, override)
 *   a4 06-07 13:00 plain 0.8, correct "refund_partial" 06-09 20:00 "  wrong   policy cited "
 *                                                                              → success    (override)
 *   b1 06-08 09:00 flagged 0.5, review approve 10:00, then correct {deny, 0.6} 15:00 "Tone"
 *                                                                              → success    (correct flag, override)
 *   c1 05-30 08:00 (agent B) plain 0.65, correct "escalate" 06-10 11:30 "Customer is eligible"
 *                                                                              → success    (override)
 *   a5 06-10 11:00 plain 0.9, approve 11:20                                   → success
 *   b2 06-10 11:00 flagged 0.1, escalated 11:10                               → flagged    (no verdict)
 *   b4 06-10 11:00 flagged 0.6, pending                                       → flagged
 *   i1 06-10 11:00 (agent C) plain 0.7                                        → approved
 * Another organization has a flagged trace decided in review and a corrected one, which must count nowhere here.
 */
describe('GET /cpi and GET /cpi/analytics', () => {
  let ctx: TestContext;
  let owner: Registered;
  let other: Registered;
  let a: TestAgent;
  let b: TestAgent;
  let c: TestAgent;
  let key: string;
  const ids: Record<string, string> = {};
  const items: Record<string, string> = {};

  const at = (iso: string) => ctx.clock.set(new Date(iso));
  const ingest = async (agent: TestAgent, name: string, prompt: string, confidence: number) => {
    const res = await ctx.post(TRACES, {
      apiKey: agent.key,
      body: traceBody({ confidence }, { prompt }, { action: 'deny' }),
    });
    expect([201, 202], res.body).toContain(res.statusCode);
    ids[name] = res.json().data.id;
    if (res.json().data.reviewItemId) items[name] = res.json().data.reviewItemId;
  };
  const decide = async (name: string, decision: string) => {
    const token = await ctx.login(owner.user.email);
    const res = await ctx.post(`${QUEUE}/${items[name]}/decision`, { token, body: { decision } });
    expect(res.statusCode, res.body).toBe(200);
  };
  const feedback = async (name: string, body: Record<string, unknown>, apiKey = key) => {
    const res = await ctx.post(INGEST, { apiKey, body: { traceId: ids[name], ...body } });
    expect(res.statusCode, res.body).toBe(200);
  };
  const read = async (url: string, token?: string) => {
    const res = await ctx.get(url, { token: token ?? (await ctx.login(owner.user.email)) });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data;
  };

  beforeAll(async () => {
    ctx = await TestContext.create({ now: '2026-05-30T07:00:00.000Z' });
    owner = await ctx.register({ organizationName: 'Feedback analytics' });
    other = await ctx.register({ organizationName: 'Elsewhere' });
    await ctx.setPlan(owner.organization.id, 'enterprise');
    await ctx.setPlan(other.organization.id, 'enterprise');
    a = await ctx.newAgent(owner.organization.id, 'Returns bot');
    b = await ctx.newAgent(owner.organization.id, 'Billing bot');
    c = await ctx.newAgent(owner.organization.id, 'Idle bot');
    const foreign = await ctx.newAgent(other.organization.id, 'Foreign bot');
    await refundFlagPolicy(ctx, owner.organization.id, []);
    await refundFlagPolicy(ctx, other.organization.id, []);
    key = (await workspaceKey(ctx, owner)).key;
    const otherKey = (await workspaceKey(ctx, other)).key;

    at('2026-05-30T08:00:00.000Z');
    await ingest(b, 'c1', 'Where is my parcel?', 0.65);
    at('2026-06-07T10:00:00.000Z');
    await ingest(a, 'a1', 'Please refund order 1', 0.4);
    at('2026-06-07T10:30:00.000Z');
    await decide('a1', 'approve');
    at('2026-06-07T11:00:00.000Z');
    await ingest(a, 'a2', 'Please refund order 2', 0.2);
    at('2026-06-07T12:00:00.000Z');
    await ingest(a, 'a3', 'Please refund order 3', 0.3);
    at('2026-06-07T12:30:00.000Z');
    const correctA3 = {
      correctedDecision: { decision: 'deny', confidence: 0.9 },
      feedbackNotes: 'Wrong policy cited',
    };
    await feedback('a3', correctA3);
    at('2026-06-07T13:00:00.000Z');
    await ingest(a, 'a4', 'Change my address', 0.8);
    await feedback('a3', correctA3);
    at('2026-06-08T09:00:00.000Z');
    await ingest(b, 'b1', 'Please refund order 4', 0.5);
    at('2026-06-08T09:30:00.000Z');
    await decide('a2', 'reject');
    at('2026-06-08T10:00:00.000Z');
    await decide('b1', 'approve');
    at('2026-06-08T15:00:00.000Z');
    await feedback('b1', { correctedDecision: { decision: 'deny', confidence: 0.6 }, feedbackNotes: 'Tone' });
    at('2026-06-09T20:00:00.000Z');
    await feedback('a4', {
      action: 'correct',
      correctedDecision: 'refund_partial',
      feedbackNotes: '  wrong   policy cited ',
    });
    at('2026-06-10T11:00:00.000Z');
    await ingest(a, 'a5', 'Opening hours?', 0.9);
    await ingest(b, 'b2', 'Please refund order 5', 0.1);
    await ingest(b, 'b4', 'Please refund order 6', 0.6);
    await ingest(c, 'i1', 'Hello', 0.7);
    // The other organization: a flagged trace rejected in review and a plain one corrected.
    await ingest(foreign, 'x1', 'Please refund order 7', 0.35);
    await ingest(foreign, 'x2', 'Hi there', 0.95);
    // x3: approved by feedback while flagged, which closes its review item (approved, by feedback): the review
    // refused afterwards, item and feedback count as one verdict, a false flag.
    await ingest(foreign, 'x3', 'Please refund order 8', 0.45);
    await feedback('x3', { action: 'approve' }, otherKey);
    at('2026-06-10T11:10:00.000Z');
    await decide('b2', 'escalate');
    const otherToken = await ctx.login(other.user.email);
    for (const [name, status] of [
      ['x1', 200],
      ['x3', 409],
    ] as const) {
      const res = await ctx.post(`${QUEUE}/${items[name]}/decision`, {
        token: otherToken,
        body: { decision: 'reject' },
      });
      expect(res.statusCode, res.body).toBe(status);
    }
    // Tabs and newlines are white space: the reason is shown trimmed, as "tone".
    await feedback('x2', { correctedDecision: 'deny', feedbackNotes: '\ttone \n' }, otherKey);
    at('2026-06-10T11:20:00.000Z');
    await feedback('a5', { action: 'approve', userEmail: 'ana@example.com' });
    at('2026-06-10T11:30:00.000Z');
    await feedback('c1', { correctedDecision: 'escalate', feedbackNotes: 'Customer is eligible' });
    at(NOW);
  });
  afterAll(async () => ctx?.close());

  it('GET /cpi: totals, the three rates, confidence per status and the 30-day trend, by hand', async () => {
    const cpi = await read(CPI);
    expect(cpi.totals).toEqual({
      traces: 10,
      approved: 2,
      flagged: 2,
      blocked: 1,
      success: 5,
      humanVerdicts: 7,
      decidedFlags: 4,
      correctFlags: 3,
      falseFlags: 1,
      humanOverrides: 4,
    });
    expect(cpi.correctFlagRate).toBe(0.75);
    expect(cpi.falseFlagRate).toBe(0.25);
    expect(cpi.humanOverrideRate).toBe(0.5714);
    expect(cpi.averageConfidenceByStatus).toEqual({
      approved: 0.55,
      flagged: 0.35,
      blocked: 0.2,
      success: 0.63,
    });
    expect(cpi.trend.map((p: { date: string }) => p.date)).toEqual(trendDays('2026-06-10'));
    const point = (date: string) => cpi.trend.find((p: { date: string }) => p.date === date);
    const empty = {
      traces: 0,
      humanVerdicts: 0,
      decidedFlags: 0,
      correctFlagRate: null,
      falseFlagRate: null,
      humanOverrideRate: null,
    };
    expect(point('2026-05-30')).toEqual({ date: '2026-05-30', ...empty, traces: 1 });
    expect(point('2026-06-07')).toEqual({
      date: '2026-06-07',
      traces: 4,
      humanVerdicts: 2,
      decidedFlags: 2,
      correctFlagRate: 0.5,
      falseFlagRate: 0.5,
      humanOverrideRate: 0.5,
    });
    expect(point('2026-06-08')).toEqual({
      date: '2026-06-08',
      traces: 1,
      humanVerdicts: 2,
      decidedFlags: 2,
      correctFlagRate: 1,
      falseFlagRate: 0,
      humanOverrideRate: 0.5,
    });
    expect(point('2026-06-09')).toEqual({
      date: '2026-06-09',
      ...empty,
      humanVerdicts: 1,
      humanOverrideRate: 1,
    });
    expect(point('2026-06-10')).toEqual({
      date: '2026-06-10',
      traces: 4,
      humanVerdicts: 2,
      decidedFlags: 0,
      correctFlagRate: null,
      falseFlagRate: null,
      humanOverrideRate: 0.5,
    });
    expect(point('2026-06-01')).toEqual({ date: '2026-06-01', ...empty });
  });

  it('GET /cpi/analytics: per agent, correction reasons, confidence delta and time to correction, by hand', async () => {
    const analytics = await read(ANALYTICS);
    // B and A have two overrides each; B's rate is higher. C has none.
    expect(analytics.agents).toEqual([
      { agentId: b.id, name: 'Billing bot', traces: 4, humanVerdicts: 2, overrides: 2, overrideRate: 0.5 },
      { agentId: a.id, name: 'Returns bot', traces: 5, humanVerdicts: 5, overrides: 2, overrideRate: 0.4 },
      { agentId: c.id, name: 'Idle bot', traces: 1, humanVerdicts: 0, overrides: 0, overrideRate: 0 },
    ]);
    // "Wrong policy cited" and "  wrong   policy cited " are one reason, shown as its first spelling (byte order).
    expect(analytics.topCorrectionReasons).toEqual([
      { reason: 'Wrong policy cited', count: 2 },
      { reason: 'Customer is eligible', count: 1 },
      { reason: 'Tone', count: 1 },
    ]);
    // The corrections that gave a confidence: a3 (0.3 → 0.9) and b1 (0.5 → 0.6).
    expect(analytics.confidenceDelta).toEqual({
      corrections: 2,
      averageOriginal: 0.4,
      averageCorrected: 0.75,
      delta: 0.35,
    });
    // a3 after 30 minutes (its repeat does not move it), b1 after 6 hours, a4 after 31 hours, c1 after 11 days.
    expect(analytics.timeToCorrection).toEqual([
      { bucket: '<1h', count: 1 },
      { bucket: '1-24h', count: 1 },
      { bucket: '1-7d', count: 1 },
      { bucket: '>7d', count: 1 },
    ]);
  });

  it('another organization sees only its own verdicts; feedback that closed a review item counts once', async () => {
    const token = await ctx.login(other.user.email);
    const cpi = await read(CPI, token);
    // x1 rejected, x3 approved by feedback (its item closed with it, the review refused), x2 corrected.
    expect(cpi.totals).toMatchObject({
      traces: 3,
      blocked: 1,
      success: 2,
      humanVerdicts: 3,
      decidedFlags: 2,
      correctFlags: 1,
      falseFlags: 1,
      humanOverrides: 1,
    });
    const analytics = await read(ANALYTICS, token);
    expect(analytics.agents.map((agent: { name: string }) => agent.name)).toEqual(['Foreign bot']);
    expect(analytics.topCorrectionReasons).toEqual([{ reason: 'tone', count: 1 }]);
  });

  it('refuses without a session (401) and with a workspace key (403)', async () => {
    const anonymous = await ctx.get(CPI);
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.json().code).toBe('UNAUTHORIZED');
    for (const url of [CPI, ANALYTICS]) {
      const res = await ctx.get(url, { apiKey: key });
      expect(res.statusCode).toBe(403);
      expect(res.json().code).toBe('FORBIDDEN');
    }
  });

  // Last: it changes the fixture. a1's day (06-07) has been rolled up by the reads above, so the correction must
  // move a1 between the day's rollup rows in its own transaction.
  it('a later verdict on a trace of a rolled-up day changes every figure it touches', async () => {
    await feedback('a1', { correctedDecision: 'deny', feedbackNotes: 'Tone' });
    const cpi = await read(CPI);
    expect(cpi.totals).toEqual({
      traces: 10,
      approved: 1,
      flagged: 2,
      blocked: 1,
      success: 6,
      humanVerdicts: 7,
      decidedFlags: 4,
      correctFlags: 4,
      falseFlags: 0,
      humanOverrides: 5,
    });
    expect([cpi.correctFlagRate, cpi.falseFlagRate, cpi.humanOverrideRate]).toEqual([1, 0, 0.7143]);
    expect(cpi.averageConfidenceByStatus).toMatchObject({ approved: 0.7, success: 0.5917 });
    const point = (date: string) => cpi.trend.find((p: { date: string }) => p.date === date);
    // a1's latest verdict moved from 06-07 to today.
    expect(point('2026-06-07')).toMatchObject({ traces: 4, humanVerdicts: 1, decidedFlags: 1, correctFlagRate: 1 });
    expect(point('2026-06-10')).toMatchObject({
      traces: 4,
      humanVerdicts: 3,
      decidedFlags: 1,
      correctFlagRate: 1,
      falseFlagRate: 0,
      humanOverrideRate: 0.6667,
    });
    const analytics = await read(ANALYTICS);
    expect(analytics.agents[0]).toEqual({
      agentId: a.id,
      name: 'Returns bot',
      traces: 5,
      humanVerdicts: 5,
      overrides: 3,
      overrideRate: 0.6,
    });
    expect(analytics.topCorrectionReasons.slice(0, 2)).toEqual([
      { reason: 'Tone', count: 2 },
      { reason: 'Wrong policy cited', count: 2 },
    ]);
    // a1 corrected 3 days and 2 hours after it was created.
    expect(analytics.timeToCorrection[2]).toEqual({ bucket: '1-7d', count: 2 });
  });
});

describe('the CPI read limiter', () => {
  let ctx: TestContext;
  let owner: Registered;

  beforeAll(async () => {
    ctx = await TestContext.create();
    owner = await ctx.register({ organizationName: 'Limited' });
  });
  afterAll(async () => ctx?.close());

  it('allows 60 reads per user in 15 minutes across both routes, then 429 RATE_LIMITED with Retry-After', async () => {
    const viewer = await ctx.addMember(owner.organization.id, 'viewer');
    for (let i = 0; i < 60; i++) {
      const res = await ctx.get(i % 2 ? ANALYTICS : CPI, { token: viewer.token });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.headers['ratelimit-limit']).toBe('60');
      expect(res.headers['ratelimit-remaining']).toBe(String(59 - i));
    }
    const refused = await ctx.get(CPI, { token: viewer.token });
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toMatchObject({ success: false, code: 'RATE_LIMITED' });
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(15 * 60);
    expect((await ctx.get(ANALYTICS, { token: viewer.token })).statusCode).toBe(429);
    // Per user: the owner of the same organization still reads, and other routes are not limited.
    expect((await ctx.get(CPI, { token: owner.token })).statusCode).toBe(200);
    expect((await ctx.get(TRACES, { token: viewer.token })).statusCode).toBe(200);
    // The window ends: the fixed clock moves past it and the viewer reads again.
    ctx.clock.advance(15 * 60 * 1000);
    expect((await ctx.get(CPI, { token: await ctx.login(viewer.email) })).statusCode).toBe(200);
  });

  it('refused requests (no session) do not use up a window', async () => {
    const member = await ctx.addMember(owner.organization.id, 'member');
    for (let i = 0; i < 5; i++) expect((await ctx.get(CPI)).statusCode).toBe(401);
    const res = await ctx.get(CPI, { token: member.token });
    expect(res.headers['ratelimit-remaining']).toBe('59');
  });
});

describe('the CPI read limiter shared through Redis by two replicas', () => {
  let a: TestContext;
  let b: TestContext;
  beforeAll(async () => {
    a = await TestContext.create({
      config: {
        redisUrl: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
        userRateLimits: {
          cpiRead: { max: 4, windowMs: 15 * 60 * 1000 },
          compliancePdf: { max: 10, windowMs: 60 * 60 * 1000 },
          auditChain: { max: 60, windowMs: 60 * 60 * 1000 },
          integrationTest: { max: 10, windowMs: 60 * 60 * 1000 },
        },
      },
    });
    b = await replicaContext(a);
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it('counts a user’s reads on either replica in one window', async () => {
    const owner = await a.register({ organizationName: 'Replicated' });
    for (const ctx of [a, b, a, b]) expect((await ctx.get(CPI, { token: owner.token })).statusCode).toBe(200);
    const onA = await a.get(ANALYTICS, { token: owner.token });
    const onB = await b.get(CPI, { token: owner.token });
    expect([onA.statusCode, onB.statusCode]).toEqual([429, 429]);
    expect(onB.json().code).toBe('RATE_LIMITED');
    expect(Number(onB.headers['retry-after'])).toBeGreaterThan(0);
    // Another user of another organization has a window of their own.
    const other = await b.register({ organizationName: 'Replicated too' });
    expect((await a.get(CPI, { token: other.token })).statusCode).toBe(200);
  });
});
