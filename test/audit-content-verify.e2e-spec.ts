import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { and, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '#platform';
import { recordSpans, type SpanSpec, toOtlpJson } from '../libs/governance/src/otel/otlp-payloads.fixture.js';
import { contentHashOf } from '../libs/governance/src/traces/trace-content.js';
import { type TraceRow, traces } from '../libs/governance/src/traces/trace.schema.js';
import { type Registered, TestContext } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';
import { appendEntry, auditEntriesOf } from './support/audit-entries.js';
import { runVerifier } from './support/audit-offline-suite.js';
import type { TestAgent } from './support/builders.js';
import { INGEST, workspaceKey } from './support/cpi-suite.js';
import { TRACES, traceBody } from './support/traces-suite.js';

const VERIFY = '/api/v1/audit/verify';
const OTLP = '/api/v1/otel/v1/traces';

const chatSpan = (prompt: string, answer: string): SpanSpec => ({
  name: 'chat gpt-4o',
  attributes: {
    'gen_ai.operation.name': 'chat',
    'gen_ai.provider.name': 'openai',
    'gen_ai.request.model': 'gpt-4o',
    'gen_ai.input.messages': JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: prompt }] }]),
    'gen_ai.output.messages': JSON.stringify([
      { role: 'assistant', finish_reason: 'stop', parts: [{ type: 'text', content: answer }] },
    ]),
  },
});

interface ContentResult {
  valid: boolean;
  totalEntries: number;
  contentChecked?: number;
  contentAltered?: number;
  contentAlteredIds?: string[];
  contentErased?: number;
  contentUnhashed?: number;
}

/**
 * GET /audit/verify?content=true: every trace's stored content against the content hash of its latest audit entry
 * that records one. A trace changed in the database is altered while the chain stays valid; feedback that changes a
 * trace records the new hash; erased traces and traces whose entries record no hash are counted apart. The offline
 * verifier (packages/audit-verify --trace) finds the same on the downloads: the export and GET /traces/:id.
 */
describe('content verification of traces (GET /audit/verify?content=true, audit-verify --trace)', () => {
  let ctx: TestContext;
  let owner: Registered;
  let untouched: Registered;
  let agent: TestAgent;
  let dir: string;
  /** Ingested through POST /traces (five) and OTLP (one), in that order. */
  const ids: string[] = [];
  let otlpId: string;
  /** The content of the first trace before feedback corrected it. */
  let beforeFeedback: Pick<TraceRow, 'outputDecision' | 'metadata' | 'rationale'>;

  const verify = async (token: string, query = '?content=true'): Promise<ContentResult> => {
    const res = await ctx.get(`${VERIFY}${query}`, { token });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data;
  };

  const ingest = async (as: TestAgent, n: number): Promise<string> => {
    const res = await ctx.post(TRACES, {
      apiKey: as.key,
      body: traceBody(
        { metadata: { ticket: n, tags: ['refund', 'ü€😀'], score: 0.1 + n / 100 }, rationale: `Reason ${n}` },
        { prompt: `Can I return order ${n}?`, context: { order: { id: n, total: 1e21 } } },
        { action: n % 2 ? 'refund' : 'deny' },
      ),
    });
    expect([201, 202], res.body).toContain(res.statusCode);
    return res.json().data.id as string;
  };

  /** The trace as GET /traces/:id answers it, written as is to the file given to the verifier. */
  const traceAnswer = async (token: string, id: string): Promise<Record<string, unknown>> => {
    const res = await ctx.get(`${TRACES}/${id}`, { token });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    // What an auditor needs besides the content: the salt (null once erased, or stored before content hashing).
    expect(body.data).toHaveProperty('contentSalt');
    if (body.data.contentSalt !== null) expect(body.data.contentSalt).toMatch(/^[0-9a-f]{32}$/);
    return body;
  };

  const setTrace = (id: string, set: Record<string, unknown>) =>
    ctx.db.db
      .update(traces)
      .set(set)
      .where(and(eq(traces.organizationId, owner.organization.id), eq(traces.id, id)));

  beforeAll(async () => {
    ctx = await TestContext.create({ now: '2026-04-01T09:00:00.000Z' });
    dir = mkdtempSync(join(tmpdir(), 'audit-content-verify-'));
    owner = await ctx.register({ organizationName: 'Content' });
    untouched = await ctx.register({ organizationName: 'Untouched' });
    await ctx.setPlan(owner.organization.id, 'enterprise');
    agent = await ctx.newAgent(owner.organization.id, 'Returns bot');
    const otherAgent = await ctx.newAgent(untouched.organization.id, 'Other bot');
    for (let n = 1; n <= 5; n++) {
      ctx.clock.advance(1_000);
      ids.push(await ingest(agent, n));
      await ingest(otherAgent, n);
    }
    const otlp = await ctx.post(OTLP, {
      apiKey: agent.key,
      payload: toOtlpJson(recordSpans([chatSpan('What is the refund window?', 'Thirty days.')])),
      headers: { 'content-type': 'application/json' },
    });
    expect(otlp.statusCode, otlp.body).toBe(200);
    const [row] = await ctx.db.db
      .select({ id: traces.id })
      .from(traces)
      .where(
        and(eq(traces.organizationId, owner.organization.id), sql`${traces.metadata}->>'source' = 'otlp'`),
      );
    otlpId = row!.id;
  });
  afterAll(async () => {
    await ctx?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('finds every trace intact while nothing was changed, and adds nothing without content=true', async () => {
    // Each ingestion recorded its content hash, over the content as stored.
    const entries = await auditEntriesOf(ctx, owner.organization.id, 'trace.approved');
    expect(entries.map((e) => e.targetId).sort()).toEqual([...ids, otlpId].sort());
    const [row] = await ctx.db.db.select().from(traces).where(eq(traces.id, otlpId));
    const otlpEntry = entries.find((e) => e.targetId === otlpId)!;
    expect(otlpEntry.metadata.contentHash).toBe(contentHashOf(row!.contentSalt!, row!));

    expect(await verify(owner.token)).toMatchObject({
      valid: true,
      contentChecked: 6,
      contentAltered: 0,
      contentAlteredIds: [],
      contentErased: 0,
      contentUnhashed: 0,
    });
    const plain = await verify(owner.token, '');
    expect(plain.valid).toBe(true);
    expect(Object.keys(plain).filter((k) => k.startsWith('content'))).toEqual([]);
    expect(
      Object.keys(await verify(owner.token, '?content=false')).some((k) => k.startsWith('content')),
    ).toBe(false);
  });

  it('answers 400 VALIDATION_ERROR for a content value other than true or false', async () => {
    for (const value of ['yes', '1', 'TRUE', '']) {
      const res = await ctx.get(`${VERIFY}?content=${value}`, { token: owner.token });
      expectErrorEnvelope(res, 400, 'VALIDATION_ERROR');
    }
  });

  it('keeps a trace corrected by feedback intact: the feedback entry records the new content hash', async () => {
    const key = await workspaceKey(ctx, owner);
    const [before] = await ctx.db.db.select().from(traces).where(eq(traces.id, ids[0]!));
    beforeFeedback = {
      outputDecision: before!.outputDecision,
      metadata: before!.metadata,
      rationale: before!.rationale,
    };
    const res = await ctx.post(INGEST, {
      apiKey: key.key,
      body: { traceId: ids[0], action: 'correct', correctedDecision: 'refund', feedbackNotes: 'Eligible' },
    });
    expect(res.statusCode, res.body).toBe(200);
    const [feedback] = await auditEntriesOf(ctx, owner.organization.id, 'cpi.corrected', ids[0]);
    expect(feedback!.metadata.contentHash).toMatch(/^[0-9a-f]{64}$/);
    const [ingestion] = await auditEntriesOf(ctx, owner.organization.id, 'trace.approved', ids[0]);
    expect(feedback!.metadata.contentHash).not.toBe(ingestion!.metadata.contentHash);
    expect(ingestion!.metadata.contentHash).toBe(contentHashOf(before!.contentSalt!, before!));
    expect(await verify(owner.token)).toMatchObject({ valid: true, contentChecked: 6, contentAltered: 0 });
  });

  it('reports a trace changed in the database as altered, while the chain stays valid', async () => {
    await setTrace(ids[1]!, { outputDecision: { action: 'deny', text: 'Outside the window.' } });
    // The corrected trace put back to its content at ingestion, which its first entry's hash matches: its latest
    // hash is the feedback's.
    await setTrace(ids[0]!, beforeFeedback);
    const result = await verify(owner.token, '?content=true&full=true');
    expect(result).toMatchObject({ valid: true, contentChecked: 6, contentAltered: 2 });
    expect([...result.contentAlteredIds!].sort()).toEqual([ids[0], ids[1]].sort());
    // Another organization is not concerned.
    expect(await verify(untouched.token)).toMatchObject({
      valid: true,
      contentChecked: 5,
      contentAltered: 0,
      contentAlteredIds: [],
    });
  });

  it('counts a trace whose salt is gone as altered (its entry records a hash), an erased one as erased', async () => {
    await setTrace(ids[2]!, { contentSalt: null });
    await setTrace(ids[3]!, {
      inputContext: null,
      outputDecision: null,
      metadata: null,
      rationale: null,
      contentSalt: null,
      erasedAt: ctx.clock.now(),
    });
    const result = await verify(owner.token);
    expect(result).toMatchObject({ valid: true, contentChecked: 6, contentAltered: 3, contentErased: 1 });
    expect(result.contentAlteredIds).toContain(ids[2]);
    expect(result.contentAlteredIds).not.toContain(ids[3]);
  });

  it('counts a trace whose entries record no content hash as unhashed (stored before content hashing)', async () => {
    // A trace as stored before content hashing: no salt, and an ingestion entry without contentHash, appended
    // through the audit log so that the chain stays valid (removing a hash from an entry would break it).
    ctx.clock.advance(1_000);
    const id = newId(ctx.clock.now().getTime());
    await ctx.db.db.insert(traces).values({
      id,
      organizationId: owner.organization.id,
      agentId: agent.id,
      status: 'approved',
      confidence: 0.9,
      inputContext: { prompt: 'Legacy' },
      outputDecision: { action: 'llm_response', text: 'Old' },
      metadata: {},
      rationale: null,
      schemaVersion: '2026-04-11',
      humanOverride: false,
      policyResults: [],
      reviewItemId: null,
      searchText: 'Legacy Old',
      contentSalt: null,
      subjectHash: null,
      erasedAt: null,
      createdAt: ctx.clock.now(),
      updatedAt: ctx.clock.now(),
    });
    await appendEntry(ctx, owner.organization.id, 'trace.approved', {
      targetType: 'trace',
      targetId: id,
      metadata: { agentId: agent.id, confidence: 0.9, policyIds: [] },
    });
    expect(await verify(owner.token, '?content=true&full=true')).toMatchObject({
      valid: true,
      contentChecked: 7,
      contentAltered: 3,
      contentErased: 1,
      contentUnhashed: 1,
    });
  });

  it('agrees with GET /traces/:id/verify on every trace, and counts a cleared or rolled-back entry pointer as altered', async () => {
    // The trace's pointer to the entry that records its hash, cleared: its content still matches that hash.
    await setTrace(ids[4]!, { contentEntryId: null });
    // The corrected trace, its content put back to what it was at ingestion (above), and its pointer moved back to
    // its ingestion entry, whose hash that content matches: its latest hash is still the feedback's.
    const [ingested] = await auditEntriesOf(ctx, owner.organization.id, 'trace.approved', ids[0]);
    await setTrace(ids[0]!, { contentEntryId: ingested!.id });
    const all = await ctx.db.db
      .select({ id: traces.id })
      .from(traces)
      .where(eq(traces.organizationId, owner.organization.id));
    const byStatus: Record<string, string[]> = { intact: [], altered: [], erased: [], unhashed: [] };
    for (const { id } of all) {
      const res = await ctx.get(`${TRACES}/${id}/verify`, { token: owner.token });
      expect(res.statusCode, res.body).toBe(200);
      byStatus[res.json().data.status as string]!.push(id);
    }
    const result = await verify(owner.token);
    expect(result).toMatchObject({
      valid: true,
      contentChecked: all.length,
      contentAltered: byStatus.altered!.length,
      contentErased: byStatus.erased!.length,
      contentUnhashed: byStatus.unhashed!.length,
    });
    expect([...result.contentAlteredIds!].sort()).toEqual([...byStatus.altered!].sort());
    expect(byStatus.altered).toContain(ids[4]);
    expect(byStatus.altered).toContain(ids[0]);
    expect(byStatus.intact).toContain(otlpId);
    const rolledBack = await ctx.get(`${TRACES}/${ids[0]}/verify`, { token: owner.token });
    const [feedback] = await auditEntriesOf(ctx, owner.organization.id, 'cpi.corrected', ids[0]);
    // It names the entry that decides it: the feedback's, not the one the pointer leads to.
    expect(rolledBack.json().data).toMatchObject({
      status: 'altered',
      auditEntryId: feedback!.id,
      contentHash: feedback!.metadata.contentHash,
    });
    await setTrace(ids[4]!, {
      contentEntryId: (await auditEntriesOf(ctx, owner.organization.id, 'trace.approved', ids[4]))[0]!.id,
    });
  });

  it('agrees offline: audit-verify --trace on the export and GET /traces/:id', async () => {
    const exported = await ctx.get('/api/v1/audit/export', { token: owner.token });
    expect(exported.statusCode, exported.body).toBe(200);
    const file = (name: string, body: string) => {
      const path = join(dir, name);
      writeFileSync(path, body, 'utf8');
      return path;
    };
    const exportFile = file('audit.ndjson', exported.body);
    const traceFile = async (name: string, id: string) =>
      file(`${name}.json`, JSON.stringify(await traceAnswer(owner.token, id)));
    const run = (...traceFiles: string[]) =>
      runVerifier(['--export', exportFile, ...traceFiles.flatMap((f) => ['--trace', f]), '--json']);

    // Untouched, through POST /traces and through OTLP: intact, exit 0.
    const intact = await run(await traceFile('intact', ids[4]!), await traceFile('otlp', otlpId));
    expect(intact.code, intact.stdout + intact.stderr).toBe(0);
    const report = JSON.parse(intact.stdout);
    expect(report.ok).toBe(true);
    expect(report.chain.valid).toBe(true);
    expect(report.traces.map((t: { id: string; status: string }) => [t.id, t.status])).toEqual([
      [ids[4], 'intact'],
      [otlpId, 'intact'],
    ]);
    expect(report.verdict).toMatch(/; 2 traces: 2 intact$/);

    // Changed in the database: altered, exit 1, though the chain is intact.
    const altered = await run(await traceFile('altered', ids[1]!));
    expect(altered.code, altered.stdout).toBe(1);
    const failed = JSON.parse(altered.stdout);
    expect(failed.chain.valid).toBe(true);
    expect(failed.traces[0]).toMatchObject({
      id: ids[1],
      status: 'altered',
      entryEventType: 'trace.approved',
    });
    expect(failed.verdict).toContain(`FAILED: trace ${ids[1]}: content altered`);

    // Put back to its content at ingestion after feedback: altered against the feedback's hash.
    const reverted = await run(await traceFile('reverted', ids[0]!));
    expect(reverted.code).toBe(1);
    expect(JSON.parse(reverted.stdout).traces[0]).toMatchObject({
      status: 'altered',
      entryEventType: 'cpi.corrected',
    });

    // Erased, and stored before content hashing: reported, not failures.
    const [legacy] = await ctx.db.db
      .select({ id: traces.id })
      .from(traces)
      .where(and(eq(traces.organizationId, owner.organization.id), sql`${traces.searchText} = 'Legacy Old'`));
    const others = await run(await traceFile('erased', ids[3]!), await traceFile('legacy', legacy!.id));
    expect(others.code, others.stdout).toBe(0);
    expect(JSON.parse(others.stdout).traces.map((t: { status: string }) => t.status)).toEqual([
      'erased',
      'unhashed',
    ]);
  });
});
