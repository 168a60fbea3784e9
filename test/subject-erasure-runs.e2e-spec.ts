import type { AddressInfo } from 'node:net';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { JobScheduler, Outbox, SCHEMA_VERSIONS } from '#platform';
import { ERASURE_BATCH } from '../libs/governance/src/subjects/subject-erasure.worker.js';
import { SubjectsRepository } from '../libs/governance/src/subjects/subjects.repository.js';
import { type Registered, TestContext } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';
import { auditEntriesOf } from './support/audit-entries.js';
import type { TestAgent } from './support/builders.js';
import { QUEUE } from './support/review-suite.js';
import { INGEST as CPI_INGEST, workspaceKey } from './support/cpi-suite.js';
import { countOf, rowsOf } from './support/rows.js';
import { TRACES } from './support/traces-suite.js';

const SUBJECTS = '/api/v1/subjects';
const START = '2026-06-01T12:00:00.000Z';
const at = (ref: string, rest: string) => `${SUBJECTS}/${encodeURIComponent(ref)}/${rest}`;

interface TraceState {
  id: string;
  erased_at: string | null;
  has_content: boolean;
}

/**
 * How an erasure runs over batches (docs/data-protection.md, "Erasure (article 17)", "Legal holds"): a hold placed
 * while it runs, a run resumed by the outbox after a failed batch, and a hold seen by the daily retention purge.
 * WORKERS=off: the outbox's retry pass and the scheduled jobs run when the test says.
 */
describe('subject erasure across batches, and holds', () => {
  let ctx: TestContext;
  let owner: Registered;
  let member: { token: string };
  let agent: TestAgent;
  let base: string;

  const ingest = async (ref: string | undefined, prompt: string, a: TestAgent = agent) => {
    const res = await ctx.post(TRACES, {
      apiKey: a.key,
      body: {
        inputContext: { prompt },
        outputDecision: { action: 'refund_decision', text: `Answer about ${prompt}` },
        rationale: `Because ${prompt}`,
        confidence: 0.9,
        ...(ref === undefined ? {} : { subjectRef: ref }),
      },
    });
    expect([201, 202], res.body).toContain(res.statusCode);
    return res.json().data as { id: string; reviewItemId?: string };
  };
  /** A trace the flag policy holds for review, then reviewed with notes: its review outcome is a stored event. */
  const ingestReviewed = async (ref: string, prompt: string) => {
    const trace = await ingest(ref, `flag-me ${prompt}`);
    expect(trace.reviewItemId).toEqual(expect.any(String));
    const reviewed = await ctx.post(`${QUEUE}/${trace.reviewItemId}/decision`, {
      token: member.token,
      body: { decision: 'approve', notes: `Notes on ${prompt}` },
    });
    expect(reviewed.statusCode, reviewed.body).toBe(200);
    return trace.id;
  };
  const subjectHashOf = async (traceId: string) => {
    const [row] = await rowsOf<{ subject_hash: string }>(
      ctx,
      sql`select subject_hash from traces where id = ${traceId}`,
    );
    expect(row?.subject_hash).toMatch(/^[0-9a-f]{64}$/);
    return row!.subject_hash;
  };
  /** `n` traces of the subject with content, at the clock's time, written with SQL for volume. */
  const seed = async (tag: string, subjectHash: string, n: number) => {
    const now = ctx.clock.now().toISOString();
    await ctx.db.db.execute(sql`insert into traces (id, organization_id, agent_id, status, confidence,
        input_context, output_decision, metadata, rationale, schema_version, search_text, subject_hash,
        created_at, updated_at)
      select substr(md5(${tag} || g::text), 1, 24), ${owner.organization.id}, ${agent.id}, 'approved', 0.9,
        jsonb_build_object('prompt', ${tag} || ' ' || g::text), '{"action": "refund_decision"}'::jsonb, '{}'::jsonb,
        'seeded', ${SCHEMA_VERSIONS[0]!.version}, ${tag}, ${subjectHash}, ${now}::timestamptz, ${now}::timestamptz
      from generate_series(1, ${n}) g`);
  };
  /** The subject's traces in the order erasure takes them (oldest first), and whether each was erased. */
  const statesOf = (subjectHash: string) =>
    rowsOf<TraceState>(
      ctx,
      sql`select id, to_char(erased_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as erased_at,
          (input_context is not null and output_decision is not null
          and rationale is not null) as has_content
        from traces where organization_id = ${owner.organization.id} and subject_hash = ${subjectHash}
        order by created_at, id`,
    );
  /** Stored events about these traces that still carry notes. */
  const eventsWithNotes = (traceIds: string[]) =>
    countOf(
      ctx,
      sql`select count(*)::int as n from domain_events
        where organization_id = ${owner.organization.id} and data->>'traceId' = any(${sql.param(traceIds)}::text[])
          and data->'notes' is not null`,
    );
  const erasureOf = async (ref: string) => {
    const res = await ctx.get(at(ref, 'erasure'), { token: owner.token });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data as Record<string, unknown>;
  };
  const requestErasure = async (ref: string) => {
    const res = await ctx.post(at(ref, 'erasure'), { token: owner.token });
    expect(res.statusCode, res.body).toBe(202);
    return res.json().data.jobId as string;
  };
  /** Waits for the erasure's delivery right after its request's commit (no clock moves: retries are not due). */
  const finished = async (ref: string) => {
    for (let i = 0; i < 400; i++) {
      const state = await erasureOf(ref);
      if (state.status === 'done') return state;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error('the erasure did not finish');
  };
  const erasedEntries = async (jobId: string) =>
    (await auditEntriesOf(ctx, owner.organization.id, 'subject.erased')).filter(
      (e) => e.metadata.erasureId === jobId,
    );

  beforeAll(async () => {
    ctx = await TestContext.create({ now: START, config: { workers: false } });
    owner = await ctx.register({ organizationName: 'Batch erasers' });
    await ctx.setPlan(owner.organization.id, 'enterprise');
    member = await ctx.addMember(owner.organization.id, 'member');
    agent = await ctx.newAgent(owner.organization.id, 'Refund bot');
    await ctx.newPolicy(owner.organization.id, {
      name: 'Flagged for review',
      outcome: 'flag',
      conditions: [{ field: 'inputContext.prompt', operator: 'contains', value: 'flag-me' }],
    });
    await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(ctx.app.getHttpServer().address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    vi.restoreAllMocks();
    await ctx?.close();
  });

  it('stops at its next batch when a hold is placed while it runs, and erases the rest once lifted', async () => {
    const REF = 'held mid-run';
    // Erasure takes the oldest first: two traces sent over the API before the seeded ones fall in the first batch,
    // two sent after them in the second. One of each pair is reviewed, so each job strips one stored event.
    const early = [await ingestReviewed(REF, 'early'), (await ingest(REF, 'early plain')).id];
    const subjectHash = await subjectHashOf(early[0]!);
    ctx.clock.advance(1000);
    await seed('held-mid-run', subjectHash, ERASURE_BATCH);
    ctx.clock.advance(1000);
    const late = [await ingestReviewed(REF, 'late'), (await ingest(REF, 'late plain')).id];
    const total = ERASURE_BATCH + 4;
    expect(await statesOf(subjectHash)).toHaveLength(total);
    ctx.clock.advance(1000);

    // The hold is placed through the API when the worker starts its second batch, after the first one committed
    // and before the second one takes the subject's lock and looks for a hold. There is no other deterministic way
    // to place it between two batches: a call-through spy on SubjectsRepository.lockSubject, whose calls are the
    // request's, then one per batch. On PostgreSQL the hold's request goes to the listening server, outside the
    // batch's async context: a transaction of its own, on another connection, committed before the batch goes on.
    // On PGlite (one session) such a transaction would wait for the batch's and never start: there the request runs
    // in the batch's async context, and joins its transaction.
    const placeHold = async (): Promise<{ status: number; body: { data: unknown } }> => {
      if (ctx.db.driver === 'pglite') {
        const res = await ctx.post(at(REF, 'hold'), { token: owner.token });
        return { status: res.statusCode, body: res.json() };
      }
      const res = await fetch(base + at(REF, 'hold'), {
        method: 'POST',
        headers: { authorization: `Bearer ${owner.token}` },
      });
      const placed = { status: res.status, body: (await res.json()) as { data: unknown } };
      // Committed: another connection sees it.
      expect(
        await countOf(
          ctx,
          sql`select count(*)::int as n from subject_holds where subject_hash = ${subjectHash}`,
        ),
      ).toBe(1);
      return placed;
    };
    const subjects = ctx.service(SubjectsRepository);
    const lockSubject = subjects.lockSubject.bind(subjects);
    let calls = 0;
    let held: Awaited<ReturnType<typeof placeHold>> | undefined;
    const spy = vi.spyOn(subjects, 'lockSubject').mockImplementation(async (organizationId, hash) => {
      calls += 1;
      if (calls === 3) held = await placeHold();
      return lockSubject(organizationId, hash);
    });
    let first: Record<string, unknown>;
    let jobId: string;
    try {
      jobId = await requestErasure(REF);
      first = await finished(REF);
    } finally {
      spy.mockRestore();
    }
    expect(held?.status, JSON.stringify(held?.body)).toBe(200);
    expect(held!.body.data).toEqual({ held: true, since: ctx.clock.now().toISOString() });

    expect(first).toEqual({
      jobId,
      status: 'done',
      tracesErased: ERASURE_BATCH,
      stoppedByHold: true,
      startedAt: ctx.clock.now().toISOString(),
      finishedAt: ctx.clock.now().toISOString(),
    });
    const [entry, ...more] = await erasedEntries(jobId);
    expect(more).toEqual([]);
    expect(entry!.metadata).toEqual({
      erasureId: jobId,
      tracesErased: ERASURE_BATCH,
      eventsChanged: 1,
      stoppedByHold: true,
      requestedBy: owner.user.id,
    });
    expect(await auditEntriesOf(ctx, owner.organization.id, 'subject.hold_placed')).toHaveLength(1);

    // Exactly the first batch is erased; the rest keep their content.
    const states = await statesOf(subjectHash);
    const erasedAt = ctx.clock.now().toISOString();
    const firstBatch = states.slice(0, ERASURE_BATCH);
    const rest = states.slice(ERASURE_BATCH);
    expect(firstBatch.filter((t) => t.erased_at === null || t.has_content)).toEqual([]);
    expect(new Set(firstBatch.map((t) => t.erased_at))).toEqual(new Set([erasedAt]));
    expect(rest).toHaveLength(4);
    expect(rest.filter((t) => t.erased_at !== null || !t.has_content)).toEqual([]);
    expect(firstBatch.map((t) => t.id)).toEqual(expect.arrayContaining(early));
    expect(rest.map((t) => t.id)).toEqual(expect.arrayContaining(late));
    const erasedTrace = (await ctx.get(`${TRACES}/${early[1]}`, { token: owner.token })).json().data;
    expect(erasedTrace).toMatchObject({ inputContext: null, rationale: null, erasedAt });
    const kept = (await ctx.get(`${TRACES}/${late[1]}`, { token: owner.token })).json().data;
    expect(kept).toMatchObject({ inputContext: { prompt: 'late plain' }, erasedAt: null });
    expect(await eventsWithNotes(early)).toBe(0);
    expect(await eventsWithNotes(late)).toBe(1);

    // While held, nothing more starts; once lifted, erasing again takes the rest.
    expectErrorEnvelope(await ctx.post(at(REF, 'erasure'), { token: owner.token }), 409, 'SUBJECT_ON_HOLD');
    const lifted = await ctx.request('DELETE', at(REF, 'hold'), { token: owner.token });
    expect(lifted.statusCode, lifted.body).toBe(200);
    ctx.clock.advance(1000);
    const secondId = await requestErasure(REF);
    expect(secondId).not.toBe(jobId);
    const second = await finished(REF);
    expect(second).toMatchObject({ jobId: secondId, tracesErased: 4, stoppedByHold: false });
    const [secondEntry] = await erasedEntries(secondId);
    expect(secondEntry!.metadata).toMatchObject({ tracesErased: 4, eventsChanged: 1, stoppedByHold: false });
    const after = await statesOf(subjectHash);
    expect(after.filter((t) => t.erased_at === null || t.has_content)).toEqual([]);
    expect(after.slice(ERASURE_BATCH).map((t) => t.erased_at)).toEqual(
      Array(4).fill(ctx.clock.now().toISOString()),
    );
    expect(await eventsWithNotes(late)).toBe(0);
  });

  it('resumes after a failed batch through the outbox retry, counting every trace and event once', async () => {
    const REF = 'resumed after a crash';
    const early = [await ingestReviewed(REF, 'early one'), await ingestReviewed(REF, 'early two')];
    const subjectHash = await subjectHashOf(early[0]!);
    ctx.clock.advance(1000);
    await seed('resumed-run', subjectHash, ERASURE_BATCH);
    ctx.clock.advance(1000);
    const late = [await ingestReviewed(REF, 'late one'), await ingestReviewed(REF, 'late two')];
    const total = ERASURE_BATCH + 4;
    const reviewed = [...early, ...late];
    const withNotes = await eventsWithNotes(reviewed);
    expect(withNotes).toBe(4);
    ctx.clock.advance(1000);
    const firstRunAt = ctx.clock.now().toISOString();

    // The second batch fails once, after its writes and before its commit, as a crash would: its transaction rolls
    // back, the first batch's stays. A call-through spy on SubjectsRepository.addErased (one call per batch) is
    // the deterministic way to fail that batch.
    const subjects = ctx.service(SubjectsRepository);
    const addErased = subjects.addErased.bind(subjects);
    let calls = 0;
    const spy = vi.spyOn(subjects, 'addErased').mockImplementation(async (...args) => {
      await addErased(...args);
      calls += 1;
      if (calls === 2) throw new Error('crashed in batch 2');
    });
    const outbox = ctx.service(Outbox);
    let jobId: string;
    try {
      jobId = await requestErasure(REF);
      // The first attempt ran after the request's commit; wait until it has recorded its failure.
      let message: { status: string; attempts: number; last_error: string | null } | undefined;
      for (let i = 0; i < 400 && !message?.last_error; i++) {
        if (i > 0) await new Promise((r) => setTimeout(r, 25));
        [message] = await rowsOf<NonNullable<typeof message>>(
          ctx,
          sql`select status, attempts, last_error from outbox_messages
            where topic = 'subject.erase' and payload->>'erasureId' = ${jobId}`,
        );
      }
      expect(message).toEqual({ status: 'pending', attempts: 1, last_error: 'crashed in batch 2' });
    } finally {
      spy.mockRestore();
    }
    expect(calls).toBe(2);

    // Between the attempts: the first batch is erased and counted, the job still runs, nothing is audited yet.
    expect(await erasureOf(REF)).toMatchObject({
      jobId,
      status: 'running',
      tracesErased: ERASURE_BATCH,
      finishedAt: null,
    });
    expect(
      await countOf(ctx, sql`select events_changed as n from subject_erasures where id = ${jobId}`),
    ).toBe(2);
    expect(await erasedEntries(jobId)).toEqual([]);
    expect(await eventsWithNotes(early)).toBe(0);
    expect(await eventsWithNotes(late)).toBe(2);

    // The outbox's retry pass, once the backoff has passed, resumes the erasure.
    expect(await outbox.runDue('subject.erase')).toBe(0);
    ctx.clock.advance(60_000);
    expect(await outbox.runDue('subject.erase')).toBe(1);
    const retryAt = ctx.clock.now().toISOString();

    expect(await erasureOf(REF)).toEqual({
      jobId,
      status: 'done',
      tracesErased: total,
      stoppedByHold: false,
      startedAt: firstRunAt,
      finishedAt: retryAt,
    });
    const entries = await erasedEntries(jobId);
    expect(entries).toHaveLength(1);
    expect(entries[0]!.metadata).toEqual({
      erasureId: jobId,
      tracesErased: total,
      eventsChanged: withNotes,
      stoppedByHold: false,
      requestedBy: owner.user.id,
    });
    expect(await eventsWithNotes(reviewed)).toBe(0);
    // Each trace erased once: the first batch by the first attempt, the rest by the retry.
    const states = await statesOf(subjectHash);
    expect(states).toHaveLength(total);
    expect(states.filter((t) => t.erased_at === null || t.has_content)).toEqual([]);
    const byTime = new Map<string, number>();
    for (const t of states) {
      byTime.set(t.erased_at!, (byTime.get(t.erased_at!) ?? 0) + 1);
    }
    expect(Object.fromEntries(byTime)).toEqual({ [firstRunAt]: ERASURE_BATCH, [retryAt]: 4 });
    const message = await rowsOf<{ status: string; attempts: number }>(
      ctx,
      sql`select status, attempts from outbox_messages where topic = 'subject.erase' and payload->>'erasureId' = ${jobId}`,
    );
    expect(message).toEqual([{ status: 'sent', attempts: 2 }]);
  });

  it('keeps a held subject’s traces out of the daily retention purge until the hold is lifted', async () => {
    const keeper = await ctx.register({ organizationName: 'Retainers' });
    await ctx.setPlan(keeper.organization.id, 'enterprise');
    const bot = await ctx.newAgent(keeper.organization.id, 'Retention bot');
    const retention = await ctx.patch('/api/v1/organizations/current', {
      token: keeper.token,
      body: { traceRetentionDays: 183 },
    });
    expect(retention.statusCode, retention.body).toBe(200);
    const HELD = 'on hold';
    const send = async (ref: string | undefined, prompt: string) => (await ingest(ref, prompt, bot)).id;
    const heldIds = [await send(HELD, 'held old 1'), await send(HELD, 'held old 2')];
    const otherIds = [await send('not on hold', 'other old 1'), await send('not on hold', 'other old 2')];
    const looseId = await send(undefined, 'no subject old');
    const recentHeld = await send(HELD, 'held recent');
    // Past the retention: 200 days old.
    const old = [...heldIds, ...otherIds, looseId];
    await ctx.db.db.execute(sql`update traces set created_at = created_at - interval '200 days'
      where id = any(${sql.param(old)}::text[])`);
    const placed = await ctx.post(at(HELD, 'hold'), { token: keeper.token });
    expect(placed.statusCode, placed.body).toBe(200);

    const present = async (ids: string[]) =>
      countOf(ctx, sql`select count(*)::int as n from traces where id = any(${sql.param(ids)}::text[])`);
    const purges = () => auditEntriesOf(ctx, keeper.organization.id, 'traces.purged');

    await ctx.service(JobScheduler).runNow('trace-retention');
    expect(await present(heldIds)).toBe(2);
    expect(await present([recentHeld])).toBe(1);
    expect(await present([...otherIds, looseId])).toBe(0);
    for (const id of heldIds)
      expect((await ctx.get(`${TRACES}/${id}`, { token: keeper.token })).statusCode).toBe(200);
    let entries = await purges();
    expect(entries).toHaveLength(1);
    expect(entries[0]!.metadata).toMatchObject({ purged: 3, trigger: 'retention', retentionDays: 183 });

    const lifted = await ctx.request('DELETE', at(HELD, 'hold'), { token: keeper.token });
    expect(lifted.statusCode, lifted.body).toBe(200);
    await ctx.service(JobScheduler).runNow('trace-retention');
    expect(await present(heldIds)).toBe(0);
    expect(await present([recentHeld])).toBe(1);
    for (const id of heldIds)
      expectErrorEnvelope(await ctx.get(`${TRACES}/${id}`, { token: keeper.token }), 404, 'NOT_FOUND');
    entries = await purges();
    expect(entries).toHaveLength(2);
    expect(entries[1]!.metadata).toMatchObject({ purged: 2, trigger: 'retention' });
  });

  it('counts in eventsChanged only the stored events whose notes it stripped', async () => {
    const REF = 'reviewed then corrected';
    const id = await ingestReviewed(REF, 'with verdict');
    // A CPI approval adds an event about the trace that holds no notes.
    const key = await workspaceKey(ctx, owner);
    const verdict = await ctx.post(CPI_INGEST, { apiKey: key.key, body: { traceId: id, action: 'approve' } });
    expect(verdict.statusCode, verdict.body).toBe(200);
    const jobId = await requestErasure(REF);
    expect(await finished(REF)).toMatchObject({ status: 'done', tracesErased: 1 });
    const [entry] = await erasedEntries(jobId);
    expect(entry!.metadata).toMatchObject({ tracesErased: 1, eventsChanged: 1 });
    expect(await eventsWithNotes([id])).toBe(0);
  });

  it('refuses notes on a review decided after the erasure (409 TRACE_ERASED), and decides it without them', async () => {
    const REF = 'late review';
    const trace = await ingest(REF, 'flag-me later');
    await requestErasure(REF);
    await finished(REF);
    const withNotes = await ctx.post(`${QUEUE}/${trace.reviewItemId}/decision`, {
      token: member.token,
      body: { decision: 'approve', notes: 'NOTES-AFTER-ERASURE' },
    });
    expectErrorEnvelope(withNotes, 409, 'TRACE_ERASED');
    const [item] = await rowsOf<{ status: string; notes: string | null }>(
      ctx,
      sql`select status, notes from review_items where id = ${trace.reviewItemId}`,
    );
    expect(item).toEqual({ status: 'pending', notes: null });
    const without = await ctx.post(`${QUEUE}/${trace.reviewItemId}/decision`, {
      token: member.token,
      body: { decision: 'approve' },
    });
    expect(without.statusCode, without.body).toBe(200);
    expect(
      await countOf(
        ctx,
        sql`select count(*)::int as n from review_items where notes like '%NOTES-AFTER-ERASURE%'`,
      ),
    ).toBe(0);
    expect(
      await countOf(
        ctx,
        sql`select count(*)::int as n from domain_events where data::text like '%NOTES-AFTER-ERASURE%'`,
      ),
    ).toBe(0);
  });
});
