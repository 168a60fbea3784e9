import { and, count, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { agents } from '../libs/governance/src/agents/agent.schema.js';
import { traces } from '../libs/governance/src/traces/trace.schema.js';
import { recordSpans, toOtlpJson } from '../libs/governance/src/otel/otlp-payloads.fixture.js';
import { TraceWriter } from '../libs/governance/src/traces/trace-writer.js';
import { apiKeys } from '../libs/identity/src/api-keys/api-key.schema.js';
import { type AppConfig, sqlLiteral, TransactionHost } from '#platform';
import { type Registered, TestContext } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';
import { auditEntriesOf } from './support/audit-entries.js';
import { type TestAgent } from './support/builders.js';

const TRACES = '/api/v1/traces';

const body = (prompt: string, over: Record<string, unknown> = {}) => ({
  inputContext: { prompt },
  outputDecision: { action: 'llm_response', text: `Answer to ${prompt}` },
  confidence: 0.9,
  ...over,
});

/** An OTLP/JSON export of `n` GenAI chat spans whose prompts are `${tag} 0`, `${tag} 1`, … */
const spans = (n: number, tag: string) =>
  toOtlpJson(
    recordSpans(
      Array.from({ length: n }, (_, i) => ({
        name: 'chat',
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.input.messages': JSON.stringify([
            { role: 'user', parts: [{ type: 'text', content: `${tag} ${i}` }] },
          ]),
          'gen_ai.output.messages': JSON.stringify([
            { role: 'assistant', parts: [{ type: 'text', content: 'ok' }] },
          ]),
        },
      })),
    ),
  );

const exportSpans = (ctx: TestContext, key: string, payload: Buffer) =>
  ctx.post('/api/v1/otel/v1/traces', {
    apiKey: key,
    payload,
    headers: { 'content-type': 'application/json' },
  });

interface Org {
  owner: Registered;
  agents: TestAgent[];
}

async function traceCount(ctx: TestContext, organizationId: string): Promise<number> {
  const [row] = await ctx.db.db
    .select({ n: count() })
    .from(traces)
    .where(eq(traces.organizationId, organizationId));
  return row!.n;
}

/**
 * Runs `fn` while a trigger makes the database refuse (a real row-level error, SQLSTATE P0001) any trace whose
 * prompt is `prompt`.
 */
async function whileRefusing(ctx: TestContext, prompt: string, fn: () => Promise<void>): Promise<void> {
  await ctx.db.db.execute(
    sql.raw(`create function refuse_prompt() returns trigger language plpgsql as $$
      begin
        if new.input_context->>'prompt' = ${sqlLiteral(prompt)} then raise exception 'refused by trigger'; end if;
        return new;
      end $$`),
  );
  await ctx.db.db.execute(
    sql`create trigger refuse_prompt before insert on traces for each row execute function refuse_prompt()`,
  );
  try {
    await fn();
  } finally {
    await ctx.db.db.execute(sql`drop trigger refuse_prompt on traces`);
    await ctx.db.db.execute(sql`drop function refuse_prompt()`);
  }
}

/**
 * Holds the organization's chain lock from another transaction until `release` is called: on PostgreSQL the
 * writer's batch waits on the advisory lock, on PGlite (one session) on the open transaction itself.
 */
async function holdChain(ctx: TestContext, organizationId: string) {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let locked!: () => void;
  const isLocked = new Promise<void>((resolve) => (locked = resolve));
  const held = ctx.db.db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`audit:${organizationId}`}, 0))`);
    locked();
    await gate;
  });
  await isLocked;
  return {
    release: async () => {
      release();
      await held;
    },
  };
}

describe('trace writer (group commit)', () => {
  let ctx: TestContext;
  let orgs: Org[];

  beforeAll(async () => {
    ctx = await TestContext.create();
    orgs = [];
    for (let i = 0; i < 3; i++) {
      const owner = await ctx.register({ organizationName: `Writer Org ${i}` });
      const orgAgents = [
        await ctx.newAgent(owner.organization.id, `Agent ${i}a`),
        await ctx.newAgent(owner.organization.id, `Agent ${i}b`),
      ];
      orgs.push({ owner, agents: orgAgents });
    }
  });
  afterAll(async () => ctx?.close());

  it('commits concurrent traces of several organizations in shared transactions, each with one chained audit entry', async () => {
    // Keys and policy sets cached first, so that requests reach the writer as fast as they arrive.
    for (const org of orgs) {
      for (const agent of org.agents) {
        expect((await ctx.post(TRACES, { apiKey: agent.key, body: body('warm') })).statusCode).toBe(201);
      }
    }
    const spy = vi.spyOn(TransactionHost.prototype, 'pipelined');
    const sent = Array.from({ length: 60 }, (_, i) => ({
      org: orgs[i % 3]!,
      agent: orgs[i % 3]!.agents[i % 2]!,
    }));
    const responses = await Promise.all(
      sent.map(({ agent }, i) => ctx.post(TRACES, { apiKey: agent.key, body: body(`question ${i}`) })),
    );
    const transactions = spy.mock.calls.length;
    spy.mockRestore();

    for (const res of responses) expect(res.statusCode, res.body).toBe(201);
    // One transaction per trace would make 60; the writer batches what queued while the previous one committed.
    // PGlite answers in-process without waiting on I/O, so traces rarely queue there: only the bound holds.
    expect(transactions).toBeGreaterThan(0);
    expect(transactions).toBeLessThan(ctx.db.driver === 'postgres' ? 30 : 61);

    for (const org of orgs) {
      const ids = responses
        .filter((_, i) => sent[i]!.org === org)
        .map((res) => res.json().data.id as string)
        .sort();
      const chain = await auditEntriesOf(ctx, org.owner.organization.id);
      // Gapless from 1, each entry linked to the one before it.
      expect(chain.map((e) => e.sequence)).toEqual(chain.map((_, i) => i + 1));
      chain.slice(1).forEach((entry, i) => expect(entry.prevHash).toBe(chain[i]!.hash));
      const traceEntries = chain.filter(
        (e) => e.eventType === 'trace.approved' && ids.includes(e.targetId ?? ''),
      );
      expect(traceEntries.map((e) => e.targetId).sort()).toEqual(ids);
      for (const entry of traceEntries) expect(entry.organizationId).toBe(org.owner.organization.id);
      const verify = await ctx.get('/api/v1/audit/verify', { token: org.owner.token });
      expect(verify.json().data).toMatchObject({ valid: true, totalEntries: chain.length });
    }
  });

  it('fails only the trace the database refuses; the rest of its batch commits', async () => {
    const org = orgs[0]!;
    const organizationId = org.owner.organization.id;
    await whileRefusing(ctx, 'batch member 5', async () => {
      const tracesBefore = await traceCount(ctx, organizationId);
      const chainBefore = (await auditEntriesOf(ctx, organizationId)).length;
      const spy = vi.spyOn(TransactionHost.prototype, 'pipelined');
      const responses = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          ctx.post(TRACES, { apiKey: org.agents[0]!.key, body: body(`batch member ${i}`) }),
        ),
      );
      const transactions = spy.mock.calls.length;
      spy.mockRestore();
      responses.forEach((res, i) => {
        if (i === 5) expectErrorEnvelope(res, 500, 'INTERNAL_ERROR');
        else expect(res.statusCode, res.body).toBe(201);
      });
      // On PostgreSQL the twelve formed batches, and the refused one was split trace by trace: more transactions
      // than traces. PGlite rarely batches (no I/O to wait on), so there each trace had its own.
      if (ctx.db.driver === 'postgres') expect(transactions).toBeGreaterThan(12);
      else expect(transactions).toBeGreaterThanOrEqual(12);
      expect(await traceCount(ctx, organizationId)).toBe(tracesBefore + 11);
      const chain = await auditEntriesOf(ctx, organizationId);
      expect(chain).toHaveLength(chainBefore + 11);
      expect(chain.map((e) => e.sequence)).toEqual(chain.map((_, i) => i + 1));
      const verify = await ctx.get('/api/v1/audit/verify', { token: org.owner.token });
      expect(verify.json().data.valid).toBe(true);
    });
  });

  it('reports an OTLP span the database refuses in partialSuccess once the export’s other spans are stored', async () => {
    const org = orgs[0]!;
    const organizationId = org.owner.organization.id;
    await whileRefusing(ctx, 'partly refused 1', async () => {
      const before = await traceCount(ctx, organizationId);
      const res = await exportSpans(ctx, org.agents[0]!.key, spans(3, 'partly refused'));
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().partialSuccess).toEqual({
        rejectedSpans: 1,
        errorMessage: expect.stringMatching(/could not be stored/),
      });
      expect(await traceCount(ctx, organizationId)).toBe(before + 2);
    });
  });

  it('answers concurrent repeats of one Idempotency-Key from the first trace’s commit, without a transaction each', async () => {
    const org = orgs[2]!;
    const agent = org.agents[1]!;
    expect((await ctx.post(TRACES, { apiKey: agent.key, body: body('warm') })).statusCode).toBe(201);
    const before = await traceCount(ctx, org.owner.organization.id);
    const spy = vi.spyOn(TransactionHost.prototype, 'pipelined');
    const responses = await Promise.all(
      Array.from({ length: 40 }, () =>
        ctx.post(TRACES, {
          apiKey: agent.key,
          body: body('repeated'),
          headers: { 'idempotency-key': 'repeat-40' },
        }),
      ),
    );
    const transactions = spy.mock.calls.length;
    spy.mockRestore();
    const stored = responses.filter((res) => res.statusCode === 201);
    expect(stored).toHaveLength(1);
    const id = stored[0]!.json().data.id as string;
    for (const res of responses.filter((r) => r !== stored[0])) {
      expect(res.statusCode, res.body).toBe(409);
      expect(res.json()).toMatchObject({ code: 'SVC_DUPLICATE_REQUEST', data: { id } });
    }
    expect(await traceCount(ctx, org.owner.organization.id)).toBe(before + 1);
    if (ctx.db.driver === 'postgres') expect(transactions).toBeLessThan(10);
    else expect(transactions).toBeLessThanOrEqual(40);
  });

  it('refuses with 401 a trace whose key was revoked behind the key cache, and with 400 one whose agent is gone', async () => {
    const org = orgs[1]!;
    const organizationId = org.owner.organization.id;
    const revoked = await ctx.newAgent(organizationId, 'Soon revoked');
    const deleted = await ctx.newAgent(organizationId, 'Soon deleted');
    // First use caches both keys in the resolver.
    expect((await ctx.post(TRACES, { apiKey: revoked.key, body: body('warm') })).statusCode).toBe(201);
    expect((await ctx.post(TRACES, { apiKey: deleted.key, body: body('warm') })).statusCode).toBe(201);
    // Changes no replica announced (another process, a manual fix): the cache still resolves the keys.
    await ctx.db.db
      .update(apiKeys)
      .set({ revokedAt: ctx.clock.now() })
      .where(and(eq(apiKeys.organizationId, organizationId), eq(apiKeys.agentId, revoked.id)));
    await ctx.db.db
      .delete(agents)
      .where(and(eq(agents.organizationId, organizationId), eq(agents.id, deleted.id)));
    const before = await traceCount(ctx, organizationId);

    const [afterRevoke, afterDelete] = await Promise.all([
      ctx.post(TRACES, { apiKey: revoked.key, body: body('after revocation') }),
      ctx.post(TRACES, { apiKey: deleted.key, body: body('after deletion') }),
    ]);
    expectErrorEnvelope(afterRevoke, 401, 'UNAUTHORIZED');
    const refused = expectErrorEnvelope(afterDelete, 400, 'VALIDATION_ERROR');
    expect(refused.details).toEqual([{ field: 'agentId', message: expect.any(String) }]);
    expect(await traceCount(ctx, organizationId)).toBe(before);
  });

  it('drains every accepted trace before shutdown goes on', async () => {
    const org = orgs[2]!;
    const organizationId = org.owner.organization.id;
    const writer = ctx.app.get(TraceWriter);
    const agent = org.agents[0]!;
    expect((await ctx.post(TRACES, { apiKey: agent.key, body: body('warm') })).statusCode).toBe(201);
    const before = await traceCount(ctx, organizationId);

    const chain = await holdChain(ctx, organizationId);
    const pending = Array.from({ length: 5 }, (_, i) =>
      ctx.post(TRACES, { apiKey: agent.key, body: body(`during shutdown ${i}`) }),
    );
    await vi.waitFor(() => expect(writer.inFlight).toBe(5), { timeout: 5000, interval: 5 });
    let drained = false;
    const draining = writer.beforeApplicationShutdown().then(() => (drained = true));
    await new Promise((r) => setTimeout(r, 50));
    expect(drained).toBe(false);

    await chain.release();
    await draining;
    expect(writer.inFlight).toBe(0);
    for (const res of await Promise.all(pending)) expect(res.statusCode, res.body).toBe(201);
    expect(await traceCount(ctx, organizationId)).toBe(before + 5);
  });
});

/** An application with its own ingestion settings, one organization and one agent. */
async function ingestionContext(ingest: Partial<AppConfig['ingest']>, organizationName: string) {
  const ctx = await TestContext.create({
    config: { ingest: { maxBatch: 100, maxPending: 10_000, lockTimeoutMs: 5000, ...ingest } },
  });
  const owner = await ctx.register({ organizationName });
  const agent = await ctx.newAgent(owner.organization.id, `${organizationName} agent`);
  return { ctx, owner, agent };
}

describe('trace writer back-pressure', () => {
  let ctx: TestContext;
  let owner: Registered;
  let agent: TestAgent;

  beforeAll(async () => {
    ({ ctx, owner, agent } = await ingestionContext(
      { maxPending: 3, lockTimeoutMs: 30_000 },
      'Saturated Org',
    ));
  });
  afterAll(async () => ctx?.close());

  it('answers 503 SERVICE_UNAVAILABLE with Retry-After once INGEST_MAX_PENDING traces wait, and stores only the accepted ones', async () => {
    const organizationId = owner.organization.id;
    const writer = ctx.app.get(TraceWriter);
    // Warm the key and policy caches, so that requests reach the writer without touching the database.
    expect((await ctx.post(TRACES, { apiKey: agent.key, body: body('warm') })).statusCode).toBe(201);
    const before = await traceCount(ctx, organizationId);

    const chain = await holdChain(ctx, organizationId);
    const accepted = Array.from({ length: 3 }, (_, i) =>
      ctx.post(TRACES, { apiKey: agent.key, body: body(`accepted ${i}`) }),
    );
    await vi.waitFor(() => expect(writer.inFlight).toBe(3), { timeout: 5000, interval: 5 });
    const refused = await Promise.all(
      Array.from({ length: 4 }, (_, i) =>
        ctx.post(TRACES, { apiKey: agent.key, body: body(`refused ${i}`) }),
      ),
    );
    for (const res of refused) {
      expectErrorEnvelope(res, 503, 'SERVICE_UNAVAILABLE');
      expect(res.headers['retry-after']).toBe('1');
    }
    await chain.release();
    for (const res of await Promise.all(accepted)) expect(res.statusCode, res.body).toBe(201);
    expect(await traceCount(ctx, organizationId)).toBe(before + 3);
    expect((await ctx.post(TRACES, { apiKey: agent.key, body: body('after') })).statusCode).toBe(201);
  });

  it('refuses an OTLP export that does not fit with 503 and one that never could with 413, storing none of their spans', async () => {
    const organizationId = owner.organization.id;
    const writer = ctx.app.get(TraceWriter);
    const otlp = (payload: Buffer) => exportSpans(ctx, agent.key, payload);
    const before = await traceCount(ctx, organizationId);

    // OTLP's own error shape (google.rpc.Status, RESOURCE_EXHAUSTED): the exporter does not retry a 413.
    const tooMany = await otlp(spans(4, 'never fits'));
    expect(tooMany.statusCode).toBe(413);
    expect(tooMany.json()).toEqual({ code: 8, message: expect.stringMatching(/split the export/) });
    expect(tooMany.headers['retry-after']).toBeUndefined();

    const chain = await holdChain(ctx, organizationId);
    const waiting = Array.from({ length: 2 }, (_, i) =>
      ctx.post(TRACES, { apiKey: agent.key, body: body(`waiting ${i}`) }),
    );
    await vi.waitFor(() => expect(writer.inFlight).toBe(2), { timeout: 5000, interval: 5 });
    const refused = await otlp(spans(2, 'does not fit now'));
    expectErrorEnvelope(refused, 503, 'SERVICE_UNAVAILABLE');
    expect(refused.headers['retry-after']).toBe('1');
    await chain.release();
    for (const res of await Promise.all(waiting)) expect(res.statusCode, res.body).toBe(201);
    expect(await traceCount(ctx, organizationId)).toBe(before + 2);

    const accepted = await otlp(spans(3, 'fits'));
    expect(accepted.statusCode, accepted.body).toBe(200);
    expect(accepted.json()).toEqual({});
    expect(await traceCount(ctx, organizationId)).toBe(before + 5);
  });
});

describe('trace writer lock timeout', () => {
  let ctx: TestContext;
  let owner: Registered;
  let agent: TestAgent;

  beforeAll(async () => {
    ({ ctx, owner, agent } = await ingestionContext({ lockTimeoutMs: 200 }, 'Stuck Org'));
  });
  afterAll(async () => ctx?.close());

  it('answers 503 with Retry-After when another transaction holds the chain lock past INGEST_LOCK_TIMEOUT_MS', async () => {
    const organizationId = owner.organization.id;
    expect((await ctx.post(TRACES, { apiKey: agent.key, body: body('warm') })).statusCode).toBe(201);
    const before = await traceCount(ctx, organizationId);
    const chain = await holdChain(ctx, organizationId);
    const pending = ctx.post(TRACES, { apiKey: agent.key, body: body('behind a stuck lock') });
    if (ctx.db.driver === 'postgres') {
      const res = await pending;
      expectErrorEnvelope(res, 503, 'SERVICE_UNAVAILABLE');
      expect(res.headers['retry-after']).toBe('1');
      await chain.release();
      expect(await traceCount(ctx, organizationId)).toBe(before);
    } else {
      // PGlite has one session: the batch waits for the other transaction itself, not for a lock, and goes on.
      await new Promise((r) => setTimeout(r, 300));
      await chain.release();
      expect((await pending).statusCode).toBe(201);
      expect(await traceCount(ctx, organizationId)).toBe(before + 1);
    }
    expect((await ctx.post(TRACES, { apiKey: agent.key, body: body('after') })).statusCode).toBe(201);
  });
});
