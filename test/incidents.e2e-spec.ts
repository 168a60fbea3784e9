import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditEntries } from '../libs/platform/src/audit/audit.schema.js';
import { type Registered, TestContext } from './support/app.js';
import type { TestAgent } from './support/builders.js';
import { TRACES, traceBody } from './support/traces-suite.js';

const INCIDENTS = '/api/v1/incidents';
const START = '2026-03-01T10:00:00.000Z';
const HOUR = 3_600_000;

describe('incidents and their article 73 clock', () => {
  let ctx: TestContext;
  let owner: Registered;
  let other: Registered;
  let agent: TestAgent;
  let viewer: { token: string };
  let member: { token: string };
  let traceId: string;

  beforeAll(async () => {
    ctx = await TestContext.create({ now: START });
    owner = await ctx.register({ organizationName: 'Incidents' });
    other = await ctx.register({ organizationName: 'Elsewhere' });
    agent = await ctx.newAgent(owner.organization.id, 'Triage bot');
    viewer = await ctx.addMember(owner.organization.id, 'viewer');
    member = await ctx.addMember(owner.organization.id, 'member');
    const trace = await ctx.post(TRACES, { apiKey: agent.key, body: traceBody() });
    traceId = trace.json().data.id;
  });
  afterAll(async () => ctx?.close());

  const create = (body: Record<string, unknown>, token = owner.token) => ctx.post(INCIDENTS, { token, body });
  const patch = (id: string, body: Record<string, unknown>, token = owner.token) =>
    ctx.patch(`${INCIDENTS}/${id}`, { token, body });
  const auditOf = (id: string) =>
    ctx.db.db
      .select()
      .from(auditEntries)
      .where(and(eq(auditEntries.organizationId, owner.organization.id), eq(auditEntries.targetId, id)));

  it('sets each category’s deadline from awareAt, and records the creation', async () => {
    const expected = {
      death: '2026-03-10T08:00:00.000Z',
      widespread_infringement: '2026-03-02T08:00:00.000Z',
      critical_infrastructure: '2026-03-02T08:00:00.000Z',
      other: '2026-03-15T08:00:00.000Z',
    };
    for (const [category, deadline] of Object.entries(expected)) {
      const res = await create({
        title: `  ${category} incident  `,
        category,
        awareAt: '2026-02-28T08:00:00.000Z',
        agentId: agent.id,
        traceId,
      });
      expect(res.statusCode, res.body).toBe(201);
      const data = res.json().data;
      expect(data).toMatchObject({
        title: `${category} incident`,
        description: null,
        category,
        agentId: agent.id,
        traceId,
        awareAt: '2026-02-28T08:00:00.000Z',
        deadline,
        status: 'open',
        reportedAt: null,
        closedAt: null,
        overdue: false,
        createdBy: owner.user.id,
        createdAt: START,
      });
      expect(data.timeLeftSeconds).toBe((Date.parse(deadline) - Date.parse(START)) / 1000);
      const [entry] = await auditOf(data.id);
      expect(entry).toMatchObject({ eventType: 'incident.create', targetType: 'incident' });
      expect(entry!.metadata).toMatchObject({ category, deadline });
    }
  });

  it('counts down with the clock, becomes overdue past the deadline, and filters on it', async () => {
    const res = await create({ title: 'Outage', category: 'critical_infrastructure', awareAt: START });
    const id = res.json().data.id;
    expect(res.json().data.timeLeftSeconds).toBe(48 * 3600);
    ctx.clock.set(new Date(Date.parse(START) + 47 * HOUR + 30 * 60_000));
    let got = (await ctx.get(`${INCIDENTS}/${id}`, { token: viewer.token })).json().data;
    expect([got.timeLeftSeconds, got.overdue]).toEqual([1800, false]);
    ctx.clock.set(new Date(Date.parse(START) + 48 * HOUR + 1000));
    got = (await ctx.get(`${INCIDENTS}/${id}`, { token: viewer.token })).json().data;
    expect([got.timeLeftSeconds, got.overdue]).toEqual([0, true]);
    const overdue = await ctx.get(INCIDENTS, { token: viewer.token, query: { overdue: 'true', limit: '100' } });
    expect(overdue.statusCode).toBe(200);
    const overdueIds = overdue.json().data.map((i: { id: string }) => i.id);
    expect(overdueIds).toContain(id);
    // The widespread-infringement and critical-infrastructure ones of the first test (deadline 03-02 08:00) too;
    // death and other are not yet.
    expect(overdue.json().data.every((i: { overdue: boolean }) => i.overdue)).toBe(true);
    expect(overdue.json().pagination.total).toBe(3);
    const notOverdue = await ctx.get(INCIDENTS, { token: viewer.token, query: { overdue: 'false' } });
    expect(notOverdue.json().pagination.total).toBe(2);
    ctx.clock.set(new Date(START));
  });

  it('moves open → reported → closed, stopping the clock; refuses other moves with 409', async () => {
    const id = (await create({ title: 'Harm', category: 'death', awareAt: START })).json().data.id;
    ctx.clock.set(new Date(Date.parse(START) + 2 * HOUR));
    const early = await patch(id, { status: 'reported', reportedAt: '2026-02-01T00:00:00.000Z' });
    expect(early.statusCode).toBe(400);
    expect(early.json().code).toBe('VALIDATION_ERROR');
    const reported = await patch(id, { status: 'reported', reportedAt: '2026-03-01T11:00:00.000Z' }, member.token);
    expect(reported.statusCode, reported.body).toBe(200);
    expect(reported.json().data).toMatchObject({
      status: 'reported',
      reportedAt: '2026-03-01T11:00:00.000Z',
      timeLeftSeconds: null,
      overdue: false,
    });
    // The same status again changes nothing and writes nothing.
    expect((await patch(id, { status: 'reported' })).statusCode).toBe(200);
    const reopen = await patch(id, { status: 'open' });
    expect(reopen.statusCode).toBe(409);
    expect(reopen.json().code).toBe('CONFLICT');
    const closed = await patch(id, { status: 'closed' });
    expect(closed.json().data).toMatchObject({ status: 'closed', closedAt: ctx.clock.now().toISOString() });
    expect((await patch(id, { status: 'reported' })).statusCode).toBe(409);
    const entries = (await auditOf(id))
      .sort((a, b) => Number(a.sequence) - Number(b.sequence))
      .map((e) => [e.eventType, (e.metadata as { to?: string }).to]);
    expect(entries).toEqual([
      ['incident.create', undefined],
      ['incident.update', 'reported'],
      ['incident.update', 'closed'],
    ]);
    ctx.clock.set(new Date(START));
  });

  it('refuses bad input with 400 and changes nothing', async () => {
    const before = (await ctx.get(INCIDENTS, { token: owner.token })).json().pagination.total;
    const foreignAgent = await ctx.newAgent(other.organization.id, 'Foreign');
    const bodies: Record<string, unknown>[] = [
      { category: 'death', awareAt: START },
      { title: '', category: 'death', awareAt: START },
      { title: 'x'.repeat(201), category: 'death', awareAt: START },
      { title: 'x', category: 'injury', awareAt: START },
      { title: 'x', category: 'death', awareAt: 'yesterday' },
      { title: 'x', category: 'death', awareAt: '2026-03-02T10:00:00.000Z' },
      { title: 'x', category: 'death', awareAt: START, agentId: foreignAgent.id },
      { title: 'x', category: 'death', awareAt: START, traceId: 'f'.repeat(24) },
      { title: 'x', category: 'death', awareAt: START, description: 'd'.repeat(10_001) },
    ];
    for (const body of bodies) {
      const res = await create(body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().code).toBe('VALIDATION_ERROR');
    }
    expect((await create({ title: 'x'.repeat(200), category: 'other', awareAt: START })).statusCode).toBe(201);
    expect((await ctx.get(INCIDENTS, { token: owner.token })).json().pagination.total).toBe(before + 1);
    const list = await ctx.get(INCIDENTS, { token: owner.token, query: { overdue: 'maybe' } });
    expect(list.statusCode).toBe(400);
  });

  it('lets viewers read but not write, and hides other organizations’ incidents', async () => {
    const denied = await create({ title: 'x', category: 'other', awareAt: START }, viewer.token);
    expect(denied.statusCode).toBe(403);
    const id = (await create({ title: 'Mine', category: 'other', awareAt: START })).json().data.id;
    expect((await patch(id, { status: 'closed' }, viewer.token)).statusCode).toBe(403);
    const theirs = await ctx.get(`${INCIDENTS}/${id}`, { token: other.token });
    expect(theirs.statusCode).toBe(404);
    expect((await patch(id, { status: 'closed' }, other.token)).statusCode).toBe(404);
    expect((await ctx.get(INCIDENTS, { token: other.token })).json().pagination.total).toBe(0);
    expect((await ctx.get(`${INCIDENTS}/not-an-id`, { token: owner.token })).statusCode).toBe(404);
    const still = await ctx.get(`${INCIDENTS}/${id}`, { token: viewer.token });
    expect(still.json().data.status).toBe('open');
  });
});
