import { and, count, eq, lt, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JobScheduler, SCHEMA_VERSIONS } from '#platform';
import { reviewItems } from '../libs/governance/src/review/review-item.schema.js';
import { traces } from '../libs/governance/src/traces/trace.schema.js';
import { type Registered, TestContext } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';
import type { TestAgent } from './support/builders.js';
import { auditEntriesOf } from './support/audit-entries.js';
import { TRACES, traceBody } from './support/traces-suite.js';

const PURGE = '/api/v1/traces/purge';
const ORG = '/api/v1/organizations/current';
const START = '2026-06-01T12:00:00.000Z';
const DAY = 86_400_000;

describe('trace purge and retention', () => {
  let ctx: TestContext;
  let owner: Registered;
  let other: Registered;
  let admin: { token: string };
  let member: { token: string };
  let a: TestAgent;
  let b: TestAgent;
  let otherAgent: TestAgent;

  /** `n` traces of the agent, `daysAgo` old, written with SQL (the ingest path has its own suites). */
  async function seedOld(organizationId: string, agentId: string, n: number, daysAgo: number): Promise<void> {
    const at = new Date(ctx.clock.nowMs() - daysAgo * DAY).toISOString();
    const version = SCHEMA_VERSIONS[0]!.version;
    await ctx.db.db
      .execute(sql`insert into traces (id, organization_id, agent_id, status, confidence, input_context,
        output_decision, metadata, schema_version, search_text, created_at, updated_at)
      select substr(md5(${agentId} || ${daysAgo}::text || g::text), 1, 24), ${organizationId}, ${agentId},
        'approved', 0.9, '{}'::jsonb, '{}'::jsonb, '{}'::jsonb, ${version}, '', ${at}::timestamptz, ${at}::timestamptz
      from generate_series(1, ${n}) g`);
  }
  const countOf = async (organizationId: string, olderThanDays?: number) => {
    const where = olderThanDays
      ? and(
          eq(traces.organizationId, organizationId),
          lt(traces.createdAt, new Date(ctx.clock.nowMs() - olderThanDays * DAY)),
        )
      : eq(traces.organizationId, organizationId);
    const [row] = await ctx.db.db.select({ n: count() }).from(traces).where(where);
    return row!.n;
  };
  const ingest = async (agent: TestAgent, confidence = 0.9) => {
    const res = await ctx.post(TRACES, { apiKey: agent.key, body: traceBody({ confidence }) });
    expect([201, 202], res.body).toContain(res.statusCode);
    return res.json().data.id as string;
  };

  beforeAll(async () => {
    ctx = await TestContext.create({ now: START, config: { workers: false } });
    owner = await ctx.register({ organizationName: 'Purgers' });
    other = await ctx.register({ organizationName: 'Bystanders' });
    admin = await ctx.addMember(owner.organization.id, 'admin');
    member = await ctx.addMember(owner.organization.id, 'member');
    a = await ctx.newAgent(owner.organization.id, 'Agent A');
    b = await ctx.newAgent(owner.organization.id, 'Agent B');
    otherAgent = await ctx.newAgent(other.organization.id, 'Other agent');
    await ctx.newPolicy(owner.organization.id, {
      name: 'Low confidence',
      outcome: 'flag',
      conditions: [{ field: 'confidence', operator: 'lt', value: 0.5 }],
    });
  });
  afterAll(async () => ctx?.close());

  it('is for the owner only, and refuses a bad filter with 400', async () => {
    const body = { before: START, dryRun: true };
    expectErrorEnvelope(await ctx.post(PURGE, { token: admin.token, body }), 403, 'FORBIDDEN');
    expectErrorEnvelope(await ctx.post(PURGE, { token: member.token, body }), 403, 'FORBIDDEN');
    expectErrorEnvelope(await ctx.post(PURGE, { apiKey: a.key, body }), 403, 'FORBIDDEN');
    for (const bad of [
      {},
      { before: 'last year' },
      { before: START, status: 'deleted' },
      { before: START, agentId: 'x' },
      { before: START, dryRun: 'yes' },
      { before: START, extra: true },
      // A null filter is not "no filter": it would widen the purge (the route fuzzer found status: null accepted).
      { before: START, status: null },
      { before: START, agentId: null },
      { before: START, dryRun: null },
    ]) {
      expectErrorEnvelope(await ctx.post(PURGE, { token: owner.token, body: bad }), 400, 'VALIDATION_ERROR');
    }
  });

  it('counts without deleting on a dry run, then purges 10,000 traces while ingestion goes on', async () => {
    await seedOld(owner.organization.id, a.id, 10_000, 400);
    await seedOld(other.organization.id, otherAgent.id, 50, 400);
    const before = new Date(ctx.clock.nowMs() - 200 * DAY).toISOString();

    const dry = await ctx.post(PURGE, { token: owner.token, body: { before, dryRun: true } });
    expect(dry.statusCode, dry.body).toBe(200);
    expect(dry.json().data).toEqual({ matched: 10_000, purged: 0 });
    expect(await countOf(owner.organization.id, 200)).toBe(10_000);

    const purge = ctx.post(PURGE, { token: owner.token, body: { before } });
    const ingested: string[] = [];
    const ingestion = (async () => {
      for (let i = 0; i < 40; i++) ingested.push(await ingest(i % 2 ? a : b));
    })();
    const [res] = await Promise.all([purge, ingestion]);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toEqual({ matched: 10_000, purged: 10_000 });
    expect(await countOf(owner.organization.id, 200)).toBe(0);
    expect(ingested).toHaveLength(40);
    expect(await countOf(owner.organization.id)).toBe(40);
    // Another organization's traces of the same age are untouched.
    expect(await countOf(other.organization.id)).toBe(50);

    const [entry] = await auditEntriesOf(ctx, owner.organization.id, 'traces.purged');
    expect(entry?.metadata).toMatchObject({
      before,
      agentId: null,
      status: null,
      purged: 10_000,
      trigger: 'request',
    });
    const verify = await ctx.get('/api/v1/audit/verify', { token: owner.token });
    expect(verify.json().data.valid, verify.body).toBe(true);
  });

  it('purges one agent’s traces of one status, with their review items', async () => {
    const flagged = [await ingest(b, 0.2), await ingest(b, 0.3)];
    const approvedOfA = await ingest(a, 0.9);
    const itemsOf = async (ids: string[]) =>
      (
        await ctx.db.db
          .select({ id: reviewItems.id, traceId: reviewItems.traceId })
          .from(reviewItems)
          .where(eq(reviewItems.organizationId, owner.organization.id))
      ).filter((r) => ids.includes(r.traceId));
    expect(await itemsOf(flagged)).toHaveLength(2);
    ctx.clock.advance(1000);
    const res = await ctx.post(PURGE, {
      token: owner.token,
      body: { before: ctx.clock.now().toISOString(), agentId: b.id, status: 'flagged' },
    });
    expect(res.json().data).toEqual({ matched: 2, purged: 2 });
    expect(await itemsOf(flagged)).toHaveLength(0);
    for (const id of flagged) {
      expectErrorEnvelope(await ctx.get(`${TRACES}/${id}`, { token: owner.token }), 404, 'NOT_FOUND');
    }
    expect((await ctx.get(`${TRACES}/${approvedOfA}`, { token: owner.token })).statusCode).toBe(200);
    // The lists' totals (from the rollups) no longer count them.
    const list = await ctx.get(TRACES, { token: owner.token, query: { agentId: b.id, status: 'flagged' } });
    expect(list.json().pagination.total).toBe(0);
  });

  it('keeps traces for at least 183 days, and purges past the retention daily', async () => {
    const set = (traceRetentionDays: unknown, token = owner.token) =>
      ctx.patch(ORG, { token, body: { traceRetentionDays } });
    for (const bad of [182, 0, -1, 1.5, '200', 40_000]) {
      expectErrorEnvelope(await set(bad), 400, 'VALIDATION_ERROR');
    }
    expectErrorEnvelope(await ctx.patch(ORG, { token: owner.token, body: {} }), 400, 'VALIDATION_ERROR');
    expectErrorEnvelope(await set(200, member.token), 403, 'FORBIDDEN');
    expect((await ctx.get(ORG, { token: owner.token })).json().data.traceRetentionDays).toBeNull();
    const kept = await set(183, admin.token);
    expect(kept.statusCode, kept.body).toBe(200);
    expect(kept.json().data.traceRetentionDays).toBe(183);
    const renamed = await ctx.patch(ORG, { token: owner.token, body: { name: 'Purgers Ltd' } });
    expect(renamed.json().data).toMatchObject({ name: 'Purgers Ltd', traceRetentionDays: 183 });

    await seedOld(owner.organization.id, a.id, 30, 190);
    await seedOld(owner.organization.id, a.id, 20, 100);
    await seedOld(other.organization.id, otherAgent.id, 10, 190);
    const recent = await countOf(owner.organization.id);
    await ctx.app.get(JobScheduler).runNow('trace-retention');
    expect(await countOf(owner.organization.id, 183)).toBe(0);
    expect(await countOf(owner.organization.id)).toBe(recent - 30);
    // An organization without retention keeps everything.
    expect(await countOf(other.organization.id)).toBe(60);
    const entries = await auditEntriesOf(ctx, owner.organization.id, 'traces.purged');
    expect(entries.at(-1)?.metadata).toMatchObject({ purged: 30, trigger: 'retention', retentionDays: 183 });
    expect(entries.at(-1)?.actor).toMatchObject({ type: 'system', id: 'retention' });

    // null keeps traces for ever again.
    expect((await set(null)).json().data.traceRetentionDays).toBeNull();
    await seedOld(owner.organization.id, a.id, 5, 300);
    await ctx.app.get(JobScheduler).runNow('trace-retention');
    expect(await countOf(owner.organization.id, 183)).toBe(5);
  });
});
