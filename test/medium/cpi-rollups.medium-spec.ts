/**
 * The CPI figures (GET /cpi and GET /cpi/analytics, through CpiReadsService) and the TraceRollups reads under them,
 * on a real database. Traces are ingested through the ingest pipeline at times set on the FixedClock; every
 * expectation is computed from the ledger of what this file ingested and changed. Covered: closed days read from
 * their rollups and the open day counted live; a day closed only once its grace has passed, and rolled up once (a
 * trace that turns up in it afterwards is not counted until the day is forgotten); review decisions and feedback
 * moving a trace between the rows of its rolled-up day, and a rolled-back change moving nothing; the purge
 * forgetting the days of the traces it deletes; ranges whose from and to cut days; the agents filter; and another
 * organization's traces, never counted. The verdict figures (from the verdict rollups: closed days rolled up, the
 * open day counted live) are compared at every step with the verdicts computed from the review items and feedback as
 * they stand, including a trace whose verdict leaves a rolled-up day for a later one and the purge's.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCHEMA_VERSIONS, TransactionHost } from '#platform';
import { CpiIngestService } from '../../libs/governance/src/cpi/cpi-ingest.service.js';
import { CpiReadsService } from '../../libs/governance/src/cpi/cpi-reads.service.js';
import { TracePurgeService } from '../../libs/governance/src/retention/trace-purge.service.js';
import { ReviewQueueService } from '../../libs/governance/src/review/review-queue.service.js';
import { TraceIngestPipeline } from '../../libs/governance/src/traces/trace-ingest.pipeline.js';
import { validateTraceIngest } from '../../libs/governance/src/traces/trace-ingest.validation.js';
import { type RollupFilter, TraceRollups } from '../../libs/governance/src/traces/trace-rollups.js';
import type { TraceStatus } from '../../libs/governance/src/traces/trace.schema.js';
import { TEST_META, type TestAgent, type TestOrganization } from '../support/builders.js';
import { expectedVerdicts } from '../support/cpi-verdicts.js';
import { MediumContext } from '../support/medium.js';

const NOW = '2026-03-20T12:00:00.000Z';
const DAY_MS = 86_400_000;
const VERSION = SCHEMA_VERSIONS[0]!;
const STATUSES: TraceStatus[] = ['approved', 'flagged', 'blocked', 'success'];

/** A trace this file ingested, as it is now. */
interface Ingested {
  id: string;
  organizationId: string;
  agentId: string;
  createdAt: Date;
  status: TraceStatus;
  humanOverride: boolean;
  confidence: number;
  reviewItemId: string | null;
  /** false: it turned up in a day already rolled up, behind the rollups' back, so reads do not count it. */
  counted: boolean;
}

const dayOf = (date: Date) => date.toISOString().slice(0, 10);
const round4 = (value: number) => Math.round(value * 10_000) / 10_000;
const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

describe('CPI figures from the daily trace rollups', () => {
  let ctx: MediumContext;
  let org: TestOrganization;
  let other: TestOrganization;
  let a: TestAgent;
  let b: TestAgent;
  let x: TestAgent;
  let pipeline: TraceIngestPipeline;
  let rollups: TraceRollups;
  let cpi: CpiReadsService;
  const ledger: Ingested[] = [];
  /** The traces of the fixture, by name (see beforeAll). */
  const t: Record<string, Ingested> = {};

  async function ingest(
    name: string,
    at: string,
    who: TestOrganization,
    agent: TestAgent,
    text: string,
    confidence: number,
    status: TraceStatus,
    counted = true,
  ): Promise<Ingested> {
    ctx.clock.set(at);
    const input = validateTraceIngest(
      { inputContext: { prompt: 'Customer asks' }, outputDecision: { action: 'answer', text }, confidence },
      VERSION.limits,
    );
    const write = await pipeline.prepare(who.owner, agent.id, input, {
      schemaVersion: VERSION,
      meta: TEST_META,
    });
    const [outcome] = pipeline.store(who.id, [write]);
    const stored = await outcome!;
    if (stored.kind !== 'stored') throw new Error(`${name} was not stored`);
    expect(stored.trace).toMatchObject({ status, confidence, createdAt: new Date(at) });
    const trace: Ingested = {
      id: stored.trace.id,
      organizationId: who.id,
      agentId: agent.id,
      createdAt: stored.trace.createdAt,
      status,
      humanOverride: false,
      confidence,
      reviewItemId: stored.trace.reviewItemId,
      counted,
    };
    ledger.push(trace);
    t[name] = trace;
    return trace;
  }

  /** The organization's traces a read should count, within the filter (both ends inclusive). */
  const counted = (organizationId: string, filter: RollupFilter = {}) =>
    ledger.filter(
      (trace) =>
        trace.organizationId === organizationId &&
        trace.counted &&
        (!filter.agentIds || filter.agentIds.includes(trace.agentId)) &&
        (!filter.status || trace.status === filter.status) &&
        (!filter.from || trace.createdAt >= filter.from) &&
        (!filter.to || trace.createdAt <= filter.to),
    );

  /** The trace figures of GET /cpi and GET /cpi/analytics, computed from the ledger. */
  function expectedFigures(organizationId: string) {
    const traces = counted(organizationId);
    const of = (status: TraceStatus) => traces.filter((trace) => trace.status === status);
    const today = Math.floor(ctx.clock.nowMs() / DAY_MS) * DAY_MS;
    return {
      totals: Object.fromEntries([
        ['traces', traces.length],
        ...STATUSES.map((status) => [status, of(status).length]),
      ]),
      averageConfidenceByStatus: Object.fromEntries(
        STATUSES.map((status) => {
          const confidences = of(status).map((trace) => trace.confidence);
          // Summed in SQL there, in JavaScript here: equal to the rounding, not to the last bit.
          return [
            status,
            confidences.length ? expect.closeTo(round4(sum(confidences) / confidences.length), 3) : null,
          ];
        }),
      ),
      trend: Array.from({ length: 30 }, (_, i) => {
        const date = dayOf(new Date(today - (29 - i) * DAY_MS));
        return { date, traces: traces.filter((trace) => dayOf(trace.createdAt) === date).length };
      }),
      agents: [...new Set(traces.map((trace) => trace.agentId))].sort().map((agentId) => {
        const mine = traces.filter((trace) => trace.agentId === agentId);
        return {
          agentId,
          traces: mine.length,
          overrides: mine.filter((trace) => trace.humanOverride).length,
        };
      }),
    };
  }

  async function actualFigures(organizationId: string) {
    const rollup = await cpi.rollup(organizationId);
    const analytics = await cpi.analytics(organizationId);
    const { traces, approved, flagged, blocked, success } = rollup.totals;
    return {
      totals: { traces, approved, flagged, blocked, success },
      averageConfidenceByStatus: rollup.averageConfidenceByStatus,
      trend: rollup.trend.map((point) => ({ date: point.date, traces: point.traces })),
      agents: analytics.agents
        .map((agent) => ({ agentId: agent.agentId, traces: agent.traces, overrides: agent.overrides }))
        .sort((p, q) => (p.agentId < q.agentId ? -1 : 1)),
    };
  }

  async function expectVerdicts(organizationId: string) {
    const expected = await expectedVerdicts(ctx.db, organizationId, ctx.clock.nowMs());
    const rollup = await cpi.rollup(organizationId);
    const { humanVerdicts, decidedFlags, correctFlags, falseFlags, humanOverrides } = rollup.totals;
    expect({ humanVerdicts, decidedFlags, correctFlags, falseFlags, humanOverrides }).toEqual(
      expected.totals,
    );
    expect(
      rollup.trend.map(
        ({ date, humanVerdicts, decidedFlags, correctFlagRate, falseFlagRate, humanOverrideRate }) => ({
          date,
          humanVerdicts,
          decidedFlags,
          correctFlagRate,
          falseFlagRate,
          humanOverrideRate,
        }),
      ),
    ).toEqual(expected.trend);
    // Every agent with a verdict has traces, so it is among the analytics' agents.
    const agents = (await cpi.analytics(organizationId)).agents;
    expect(Object.fromEntries(agents.map((agent) => [agent.agentId, agent.humanVerdicts]))).toEqual(
      Object.fromEntries(agents.map((agent) => [agent.agentId, expected.byAgent.get(agent.agentId) ?? 0])),
    );
    expect(
      [...expected.byAgent.keys()].filter((id) => !agents.some((agent) => agent.agentId === id)),
    ).toEqual([]);
  }

  const expectFigures = async (organizationId: string) => {
    expect(await actualFigures(organizationId)).toEqual(expectedFigures(organizationId));
    await expectVerdicts(organizationId);
  };

  beforeAll(async () => {
    ctx = await MediumContext.create({ now: '2026-01-15T08:00:00.000Z' });
    org = await ctx.newOrganization({ organizationName: 'CPI rollups' });
    other = await ctx.newOrganization({ organizationName: 'CPI elsewhere' });
    a = await ctx.newAgent(org.id, 'Returns bot');
    b = await ctx.newAgent(org.id, 'Billing bot');
    x = await ctx.newAgent(other.id, 'Foreign bot');
    for (const who of [org, other]) {
      await ctx.newPolicy(who.id, {
        outcome: 'flag',
        conditions: [{ field: 'outputDecision.text', operator: 'contains', value: 'refund' }],
      });
    }
    await ctx.newPolicy(org.id, {
      outcome: 'block',
      conditions: [{ field: 'outputDecision.text', operator: 'contains', value: '4111' }],
    });
    pipeline = ctx.service(TraceIngestPipeline);
    rollups = ctx.service(TraceRollups);
    cpi = ctx.service(CpiReadsService);

    await ingest('old', '2026-02-01T09:00:00.000Z', org, a, 'We open at nine.', 0.5, 'approved');
    await ingest('a1', '2026-03-16T08:00:00.000Z', org, a, 'I will refund the order.', 0.4, 'flagged');
    await ingest('b1', '2026-03-16T09:30:00.000Z', org, b, 'Your parcel ships today.', 0.9, 'approved');
    await ingest('x1', '2026-03-16T10:00:00.000Z', other, x, 'A refund for you.', 0.25, 'flagged');
    await ingest('a2', '2026-03-16T23:59:59.999Z', org, a, 'Card 4111 is on file.', 0.2, 'blocked');
    await ingest('b2', '2026-03-17T00:00:00.000Z', org, b, 'Your parcel ships tomorrow.', 0.7, 'approved');
    await ingest('a3', '2026-03-17T10:00:00.000Z', org, a, 'I will refund half.', 0.3, 'flagged');
    await ingest('b3', '2026-03-17T10:30:00.000Z', org, b, 'A refund is on its way.', 0.6, 'flagged');
    await ingest('x2', '2026-03-17T12:00:00.000Z', other, x, 'All good.', 0.85, 'approved');
    await ingest('a4', '2026-03-18T14:00:00.000Z', org, a, 'See you at nine.', 0.8, 'approved');
    await ingest('b4', '2026-03-18T15:00:00.000Z', org, b, 'Card 4111 again.', 0.1, 'blocked');
    await ingest('a5', '2026-03-19T11:00:00.000Z', org, a, 'I can refund that.', 0.35, 'flagged');
    await ingest('b5', '2026-03-19T18:00:00.000Z', org, b, 'Thanks for waiting.', 0.55, 'approved');
    await ingest('a6', '2026-03-20T09:00:00.000Z', org, a, 'See you soon.', 0.95, 'approved');
    await ingest('x3', '2026-03-20T10:00:00.000Z', other, x, 'Fine.', 0.65, 'approved');
    await ingest('b6', '2026-03-20T11:00:00.000Z', org, b, 'Let me refund you.', 0.45, 'flagged');
    ctx.clock.set(NOW);
  });
  afterAll(async () => ctx?.close());

  it('computes the trace figures from the closed days’ rollups and counts today’s traces live', async () => {
    await expectFigures(org.id);
    await expectFigures(other.id);
    // The same, counted by hand: the February trace is in the totals, not in the 30-day trend.
    const first = await cpi.rollup(org.id);
    expect(first.totals).toMatchObject({ traces: 13, approved: 6, flagged: 5, blocked: 2, success: 0 });
    expect(first.totals).toMatchObject({ humanVerdicts: 0, humanOverrides: 0 });
    expect(sum(first.trend.map((point) => point.traces))).toBe(12);
    expect(first.trend.at(-1)).toMatchObject({ date: '2026-03-20', traces: 2 });
    // Today is open: a trace ingested now counts in the next read.
    await ingest('a7', '2026-03-20T12:01:00.000Z', org, a, 'Back at one.', 0.5, 'approved');
    await expectFigures(org.id);
    expect((await cpi.rollup(org.id)).trend.at(-1)).toMatchObject({ date: '2026-03-20', traces: 3 });
    await expectFigures(other.id);
  });

  it('moves a trace between the rows of its rolled-up day when a review decision or feedback changes it', async () => {
    // Read first, so that the days are rolled up before their traces change.
    await expectFigures(org.id);
    const review = ctx.service(ReviewQueueService);
    const feedback = ctx.service(CpiIngestService);
    await review.decide(org.owner, t.a3!.reviewItemId!, { decision: 'approve' }, TEST_META);
    t.a3!.status = 'approved';
    await review.decide(org.owner, t.a5!.reviewItemId!, { decision: 'reject' }, TEST_META);
    t.a5!.status = 'blocked';
    await expectFigures(org.id);
    // A correction closes the pending review item of a1 as well; an approval of b1, which had no item.
    await feedback.ingest(
      org.owner,
      { traceId: t.a1!.id, correctedDecision: 'deny', feedbackNotes: 'No' },
      TEST_META,
    );
    Object.assign(t.a1!, { status: 'success', humanOverride: true });
    await feedback.ingest(org.owner, { traceId: t.b1!.id, action: 'approve' }, TEST_META);
    t.b1!.status = 'success';
    await expectFigures(org.id);
    expect((await cpi.rollup(org.id)).totals).toMatchObject({
      success: 2,
      humanVerdicts: 4,
      decidedFlags: 3,
      correctFlags: 2,
      falseFlags: 1,
      humanOverrides: 1,
    });
    // A change that rolls back takes its move back with it.
    const host = ctx.service(TransactionHost);
    await expect(
      host.run(async () => {
        await feedback.ingest(org.owner, { traceId: t.b3!.id, action: 'approve' }, TEST_META);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    await expectFigures(org.id);
    await expectFigures(other.id);
  });

  it('sums ranges whose from and to cut days, by agents and status, from the rollups and the edge days', async () => {
    const at = (iso: string) => new Date(iso);
    const filters: RollupFilter[] = [
      {},
      { from: at('2026-03-16T09:00:00.000Z'), to: at('2026-03-18T14:30:00.000Z') },
      { from: at('2026-03-17T00:00:00.000Z'), to: at('2026-03-18T23:59:59.999Z') },
      { from: at('2026-03-17T00:00:00.001Z') },
      { to: at('2026-03-16T23:59:59.999Z') },
      { to: at('2026-03-16T23:59:59.998Z') },
      { from: at('2026-03-17T10:15:00.000Z'), to: at('2026-03-17T10:45:00.000Z') },
      { from: at('2026-03-19T17:00:00.000Z') },
      { from: at('2026-03-20T00:00:00.000Z') },
      { from: at('2026-01-01T00:00:00.000Z'), to: at('2026-02-28T23:59:59.999Z') },
      { agentIds: [a.id] },
      { agentIds: [b.id], from: at('2026-03-16T09:00:00.000Z'), to: at('2026-03-19T12:00:00.000Z') },
      { agentIds: [a.id, x.id], from: at('2026-03-16T09:00:00.000Z'), to: at('2026-03-20T10:30:00.000Z') },
      { agentIds: [x.id] },
      { agentIds: [] },
      { status: 'flagged', from: at('2026-03-16T12:00:00.000Z') },
      { status: 'success', agentIds: [b.id], to: at('2026-03-19T00:00:00.000Z') },
    ];
    for (const filter of filters) {
      const label = JSON.stringify(filter);
      const traces = counted(org.id, filter);
      expect(await rollups.count(org.id, filter), label).toBe(traces.length);
      const rows = await rollups.rows(org.id, filter);
      const key = (r: { day: string; agentId: string; status: string; humanOverride: boolean }) =>
        `${r.day} ${r.agentId} ${r.status} ${r.humanOverride}`;
      const expected = new Map<string, { traces: number; confidence: number }>();
      for (const trace of traces) {
        const k = key({ ...trace, day: dayOf(trace.createdAt) });
        const row = expected.get(k) ?? { traces: 0, confidence: 0 };
        expected.set(k, { traces: row.traces + 1, confidence: row.confidence + trace.confidence });
      }
      expect(rows.map(key).sort(), label).toEqual([...expected.keys()].sort());
      for (const row of rows) {
        expect(row.traces, label).toBe(expected.get(key(row))!.traces);
        expect(row.confidenceSum).toBeCloseTo(expected.get(key(row))!.confidence, 9);
      }
      const byStatus = await rollups.summed(org.id, ['status'], filter);
      expect(Object.fromEntries(byStatus.map((row) => [row.status, row.traces])), label).toEqual(
        Object.fromEntries(
          STATUSES.map((status) => [status, traces.filter((trace) => trace.status === status).length]).filter(
            ([, n]) => n !== 0,
          ),
        ),
      );
    }
    // The other organization's traces, whatever the range or the agents named.
    expect(await rollups.count(other.id)).toBe(counted(other.id).length);
    expect(await rollups.count(other.id, { agentIds: [a.id, b.id] })).toBe(0);
    expect(await rollups.count(org.id, { agentIds: [x.id] })).toBe(0);
  });

  it('closes a day once its grace has passed and rolls it up once: a trace that turns up later is not counted', async () => {
    await ingest('b7', '2026-03-20T23:58:00.000Z', org, b, 'Late evening.', 0.5, 'approved');
    // Five minutes into the next day, yesterday is still within its grace and counted live: a trace that turns
    // up in it is counted at once.
    ctx.clock.set('2026-03-21T00:05:00.000Z');
    await expectFigures(org.id);
    await ingest('a8', '2026-03-20T23:59:00.000Z', org, a, 'One more.', 0.6, 'approved');
    ctx.clock.set('2026-03-21T00:06:00.000Z');
    await expectFigures(org.id);
    // Ten minutes in, it is closed: this read rolls it up.
    ctx.clock.set('2026-03-21T00:10:00.000Z');
    await expectFigures(org.id);
    // Traces that turn up in rolled-up days afterwards (only behind the service's back: here, the clock moved
    // back) are not counted by reads of whole days.
    await ingest('a9', '2026-03-20T23:59:30.000Z', org, a, 'Too late.', 0.7, 'approved', false);
    await ingest('b8', '2026-03-18T16:00:00.000Z', org, b, 'Much too late.', 0.2, 'approved', false);
    ctx.clock.set('2026-03-21T00:11:00.000Z');
    await expectFigures(org.id);
    expect((await cpi.rollup(org.id)).trend.find((point) => point.date === '2026-03-20')).toMatchObject({
      traces: counted(org.id).filter((trace) => dayOf(trace.createdAt) === '2026-03-20').length,
    });
    // A range that cuts the day counts that part of it live, from the traces: the late trace is in it.
    const cut = { from: new Date('2026-03-18T15:30:00.000Z'), to: new Date('2026-03-19T12:00:00.000Z') };
    expect(await rollups.count(org.id, cut)).toBe(counted(org.id, cut).length + 1);
    await expectFigures(other.id);
  });

  it('takes a trace out of its rolled-up verdict day when a later verdict comes, and counts the open day live', async () => {
    const review = ctx.service(ReviewQueueService);
    const feedback = ctx.service(CpiIngestService);
    // The verdicts of 03-20 (the second test's, at noon) are on a closed day now: this read rolls it up.
    ctx.clock.set('2026-03-21T00:12:00.000Z');
    await expectFigures(org.id);
    const rolledUp = (await ctx.db.db.execute(
      sql`select count(*)::int as n from cpi_verdict_rollup_days where organization_id = ${org.id} and day = '2026-03-20'`,
    )) as unknown as { rows: { n: number }[] };
    expect(rolledUp.rows[0]!.n).toBe(1);
    // a3, approved in review on 03-20, corrected today: its verdict moves from 03-20 to 03-21.
    await feedback.ingest(org.owner, { traceId: t.a3!.id, correctedDecision: 'deny' }, TEST_META);
    Object.assign(t.a3!, { status: 'success', humanOverride: true });
    await expectFigures(org.id);
    // a1, corrected on 03-20 (which closed its item), approved today.
    await feedback.ingest(org.owner, { traceId: t.a1!.id, action: 'approve' }, TEST_META);
    Object.assign(t.a1!, { status: 'success', humanOverride: false });
    await expectFigures(org.id);
    // b6, flagged on 03-20 and pending: decided today, its first verdict.
    await review.decide(org.owner, t.b6!.reviewItemId!, { decision: 'approve' }, TEST_META);
    t.b6!.status = 'approved';
    await expectFigures(org.id);
    // A verdict that rolls back leaves b1's (its approval on 03-20) where it was.
    const host = ctx.service(TransactionHost);
    await expect(
      host.run(async () => {
        await feedback.ingest(org.owner, { traceId: t.b1!.id, action: 'approve' }, TEST_META);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    await expectFigures(org.id);
    // A day later 03-21 is rolled up in turn, and a3's verdict leaves it for 03-22.
    ctx.clock.set('2026-03-22T00:10:00.000Z');
    await expectFigures(org.id);
    await feedback.ingest(org.owner, { traceId: t.a3!.id, action: 'approve' }, TEST_META);
    t.a3!.humanOverride = false;
    await expectFigures(org.id);
    // An item left undecided beside feedback (as before feedback closed items): a review decision moves the
    // feedback's verdict from its rolled-up day, 03-20 (a5's item is set back behind the service's back).
    await feedback.ingest(org.owner, { traceId: t.a5!.id, action: 'approve' }, TEST_META);
    t.a5!.status = 'success';
    ctx.clock.set('2026-03-23T00:10:00.000Z');
    await ctx.db.db.execute(
      sql`update review_items set status = 'pending', decided_at = null where id = ${t.a5!.reviewItemId!}`,
    );
    await expectFigures(org.id);
    await review.decide(org.owner, t.a5!.reviewItemId!, { decision: 'reject' }, TEST_META);
    t.a5!.status = 'blocked';
    await expectFigures(org.id);
    await expectFigures(other.id);
  });

  it('counts the days of purged traces anew: the purge forgets them in its transaction', async () => {
    const before = new Date('2026-03-21T00:00:00.000Z');
    const doomed = ledger.filter(
      (trace) => trace.organizationId === org.id && trace.agentId === b.id && trace.createdAt < before,
    );
    const purge = ctx.service(TracePurgeService);
    const result = await purge.purgeFor(
      org.owner,
      { before: before.toISOString(), agentId: b.id },
      TEST_META,
    );
    expect(result).toEqual({ matched: doomed.length, purged: doomed.length });
    for (const trace of doomed) ledger.splice(ledger.indexOf(trace), 1);
    // The deleted traces' days, from the first to the last, are forgotten and rolled up again on the next read:
    // the traces that had turned up in them are counted now.
    const first = dayOf(new Date(Math.min(...doomed.map((trace) => trace.createdAt.getTime()))));
    const last = dayOf(new Date(Math.max(...doomed.map((trace) => trace.createdAt.getTime()))));
    expect([first, last]).toEqual(['2026-03-16', '2026-03-20']);
    for (const trace of ledger) {
      const day = dayOf(trace.createdAt);
      if (trace.organizationId === org.id && day >= first && day <= last) trace.counted = true;
    }
    expect(ledger.filter((trace) => !trace.counted)).toEqual([]);
    await expectFigures(org.id);
    expect((await cpi.analytics(org.id)).agents.map((agent) => agent.agentId)).toEqual([a.id]);
    await expectFigures(other.id);
  });
});
