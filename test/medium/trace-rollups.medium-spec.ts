import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TransactionHost } from '#platform';
import { TraceRollups, type RollupFilter } from '../../libs/governance/src/traces/trace-rollups.js';
import { traces, type TraceStatus } from '../../libs/governance/src/traces/trace.schema.js';
import type { TestAgent, TestOrganization } from '../support/builders.js';
import { MediumContext } from '../support/medium.js';

const NOW = '2026-03-20T12:00:00.000Z';
const HOUR = 3_600_000;
const STATUSES: TraceStatus[] = ['approved', 'flagged', 'blocked', 'success'];

/** A small deterministic generator, so that a failure can be replayed. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

describe('TraceRollups: closed days rolled up, open days live, changes adjusted in their transaction', () => {
  let ctx: MediumContext;
  let org: TestOrganization;
  let other: TestOrganization;
  let agents: TestAgent[];
  let rollups: TraceRollups;
  let host: TransactionHost;
  let n = 0;

  const insertTrace = async (
    organizationId: string,
    agentId: string,
    createdAt: Date,
    status: TraceStatus,
    confidence: number,
  ) => {
    n += 1;
    const id = (Date.now().toString(16) + n.toString(16).padStart(8, '0')).padEnd(24, '0').slice(0, 24);
    await ctx.db.db.insert(traces).values({
      id,
      organizationId,
      agentId,
      status,
      confidence,
      inputContext: { prompt: 'p' },
      outputDecision: { action: 'llm_response', text: 't' },
      metadata: {},
      schemaVersion: '2026-04-11',
      searchText: 'p t',
      createdAt,
      updatedAt: createdAt,
    });
    return id;
  };

  /** The oracle: the same figures aggregated over the traces themselves. */
  const live = async (organizationId: string, filter: RollupFilter) => {
    const conditions = [sql`organization_id = ${organizationId}`];
    if (filter.agentIds) conditions.push(sql`agent_id = any(${sql.param([...filter.agentIds])}::text[])`);
    if (filter.status) conditions.push(sql`status = ${filter.status}`);
    if (filter.from) conditions.push(sql`created_at >= ${filter.from.toISOString()}::timestamptz`);
    if (filter.to) conditions.push(sql`created_at <= ${filter.to.toISOString()}::timestamptz`);
    const result = await ctx.db.db
      .execute(sql`select count(*)::int as n, coalesce(sum(confidence), 0)::float8 as c,
        count(*) filter (where human_override)::int as o
      from ${traces} where ${sql.join(conditions, sql` and `)}`);
    const row = (result as unknown as { rows: { n: number; c: number; o: number }[] }).rows[0]!;
    return { traces: Number(row.n), confidence: Number(row.c), overrides: Number(row.o) };
  };
  const fromRollups = async (organizationId: string, filter: RollupFilter) => {
    const rows = await rollups.rows(organizationId, filter);
    return {
      traces: rows.reduce((a, r) => a + r.traces, 0),
      confidence: rows.reduce((a, r) => a + r.confidenceSum, 0),
      overrides: rows.filter((r) => r.humanOverride).reduce((a, r) => a + r.traces, 0),
    };
  };
  const expectSame = async (organizationId: string, filter: RollupFilter) => {
    const expected = await live(organizationId, filter);
    const actual = await fromRollups(organizationId, filter);
    expect(actual.traces, JSON.stringify(filter)).toBe(expected.traces);
    expect(actual.overrides, JSON.stringify(filter)).toBe(expected.overrides);
    expect(actual.confidence).toBeCloseTo(expected.confidence, 6);
    expect(await rollups.count(organizationId, filter), JSON.stringify(filter)).toBe(expected.traces);
  };
  const rolledUpDays = async (organizationId: string) => {
    const result = await ctx.db.db.execute(
      sql`select count(*)::int as n from trace_rollup_days where organization_id = ${organizationId}`,
    );
    return Number((result as unknown as { rows: { n: number }[] }).rows[0]!.n);
  };

  beforeAll(async () => {
    ctx = await MediumContext.create({ now: NOW });
    org = await ctx.newOrganization({ organizationName: 'Rollups' });
    other = await ctx.newOrganization({ organizationName: 'Elsewhere' });
    agents = [
      await ctx.newAgent(org.id, 'a'),
      await ctx.newAgent(org.id, 'b'),
      await ctx.newAgent(org.id, 'c'),
    ];
    rollups = ctx.service(TraceRollups);
    host = ctx.service(TransactionHost);
    // Ten days of traces at odd hours, the last ones today (the open day), and some of another organization.
    const random = rng(7);
    const start = Date.parse(NOW) - 10 * 24 * HOUR;
    for (let i = 0; i < 300; i++) {
      const at = new Date(start + Math.floor(random() * 10 * 24 * HOUR));
      const agent = agents[Math.floor(random() * agents.length)]!;
      const status = STATUSES[Math.floor(random() * 3)]!;
      await insertTrace(org.id, agent.id, at, status, Math.round(random() * 100) / 100);
    }
    const otherAgent = await ctx.newAgent(other.id, 'x');
    for (let i = 0; i < 20; i++)
      await insertTrace(other.id, otherAgent.id, new Date(start + i * 12 * HOUR), 'approved', 0.5);
  });
  afterAll(async () => ctx?.close());

  it('agrees with the traces for every filter: whole days, partial edge days, agents, status, open day', async () => {
    const random = rng(11);
    const nowMs = Date.parse(NOW);
    const filters: RollupFilter[] = [
      {},
      { status: 'flagged' },
      { agentIds: [agents[0]!.id] },
      { agentIds: [agents[1]!.id, agents[2]!.id], status: 'approved' },
      { agentIds: [] },
      { from: new Date('2026-03-12T00:00:00.000Z'), to: new Date('2026-03-14T23:59:59.999Z') },
      { from: new Date(nowMs - 2 * HOUR) },
      { to: new Date('2026-03-11T00:00:00.000Z') },
    ];
    for (let i = 0; i < 25; i++) {
      const a = nowMs - Math.floor(random() * 11 * 24 * HOUR);
      const b = nowMs - Math.floor(random() * 11 * 24 * HOUR);
      filters.push({ from: new Date(Math.min(a, b)), to: new Date(Math.max(a, b)) });
    }
    for (const filter of filters) await expectSame(org.id, filter);
    // Ten closed days were rolled up (the day ending ten minutes ago or less is not, nor today).
    expect(await rolledUpDays(org.id)).toBe(10);
    expect(await rolledUpDays(other.id)).toBe(0);
    await expectSame(other.id, {});
  });

  it('moves a changed trace between the rows of its rolled-up day, in the changing transaction', async () => {
    await expectSame(org.id, {});
    const oldTrace = await insertTraceInClosedDay();
    await expectSame(org.id, {});
    // Changed after its day was rolled up: the change is applied to the day's rows.
    await host.run(async () => {
      await host.db.execute(
        sql`update traces set status = 'success', human_override = true, confidence = 0.25 where id = ${oldTrace.id}`,
      );
      await rollups.traceChanged(org.id, oldTrace, {
        status: 'success',
        humanOverride: true,
        confidence: 0.25,
      });
    });
    await expectSame(org.id, {});
    await expectSame(org.id, { status: 'success' });
    await expectSame(org.id, { status: oldTrace.status });
    // A rolled-back change leaves the rows as they were.
    await expect(
      host.run(async () => {
        await host.db.execute(sql`update traces set status = 'blocked' where id = ${oldTrace.id}`);
        await rollups.traceChanged(
          org.id,
          { ...oldTrace, status: 'success', humanOverride: true, confidence: 0.25 },
          { status: 'blocked', humanOverride: true, confidence: 0.25 },
        );
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    await expectSame(org.id, { status: 'blocked' });
    await expectSame(org.id, {});
  });

  it('counts deleted traces anew once their days are forgotten', async () => {
    const from = new Date('2026-03-13T00:00:00.000Z');
    const to = new Date('2026-03-13T23:59:59.999Z');
    await host.run(async () => {
      await host.db.execute(
        sql`delete from traces where organization_id = ${org.id} and created_at >= ${from.toISOString()}::timestamptz and created_at <= ${to.toISOString()}::timestamptz`,
      );
      await rollups.forgetDays(org.id, from, to);
    });
    await expectSame(org.id, {});
    await expectSame(org.id, { from, to });
  });

  it('rolls a day up once when readers race for it', async () => {
    ctx.clock.advance(24 * HOUR);
    const results = await Promise.all([rollups.count(org.id), rollups.count(org.id), rollups.count(org.id)]);
    const expected = (await live(org.id, {})).traces;
    expect(results).toEqual([expected, expected, expected]);
    // Today became a closed day: eleven days now, each rolled up once (a second insert would have failed).
    expect(await rolledUpDays(org.id)).toBe(11);
    ctx.clock.set(NOW);
  });

  /** A trace in a closed, already rolled-up day. */
  async function insertTraceInClosedDay() {
    const createdAt = new Date('2026-03-15T08:30:00.000Z');
    const before = await live(org.id, {
      from: new Date('2026-03-15T00:00:00.000Z'),
      to: new Date('2026-03-15T23:59:59.999Z'),
    });
    // Inserted behind the rollup's back, then accounted for like a change from nothing (a test-only shortcut):
    // the rollup of the day is forgotten and recomputed, so the trace is counted.
    const id = await insertTrace(org.id, agents[0]!.id, createdAt, 'flagged', 0.4);
    await host.run(() => rollups.forgetDays(org.id, createdAt, createdAt));
    const after = await live(org.id, {
      from: new Date('2026-03-15T00:00:00.000Z'),
      to: new Date('2026-03-15T23:59:59.999Z'),
    });
    expect(after.traces).toBe(before.traces + 1);
    return {
      id,
      agentId: agents[0]!.id,
      createdAt,
      status: 'flagged' as TraceStatus,
      humanOverride: false,
      confidence: 0.4,
    };
  }
});
