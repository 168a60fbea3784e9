import type { AddressInfo } from 'node:net';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordSpans, type SpanSpec } from '../libs/governance/src/otel/otlp-payloads.fixture.js';
import { type Registered, TestContext } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';
import { auditEntriesOf } from './support/audit-entries.js';
import type { TestAgent } from './support/builders.js';
import { INGEST as CPI_INGEST, workspaceKey } from './support/cpi-suite.js';
import { countOf, rowsOf } from './support/rows.js';
import { TRACES, traceBody } from './support/traces-suite.js';

const SUBJECTS = '/api/v1/subjects';
const OTLP = '/api/v1/otel/v1/traces';
const PURGE = '/api/v1/traces/purge';
const REF = 'acct:0042/ß';
const at = (ref: string, rest: string) => `${SUBJECTS}/${encodeURIComponent(ref)}/${rest}`;

type ExportResult = Parameters<Parameters<SpanExporter['export']>[1]>[0];
const exportWith = (exporter: SpanExporter, spans: ReadableSpan[]) =>
  new Promise<ExportResult>((resolve) => exporter.export(spans, resolve));

function chatSpan(prompt: string, subjectRef?: unknown): SpanSpec {
  return {
    name: 'chat gpt-4o',
    attributes: {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.input.messages': JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: prompt }] }]),
      'gen_ai.output.messages': JSON.stringify([
        { role: 'assistant', finish_reason: 'stop', parts: [{ type: 'text', content: `About ${prompt}` }] },
      ]),
      ...(subjectRef === undefined ? {} : { 'governance.subject.ref': subjectRef as string }),
    },
  };
}

describe('subjects: decisions, holds and the content check', () => {
  let ctx: TestContext;
  let owner: Registered;
  let other: Registered;
  let admin: { token: string };
  let member: { token: string };
  let viewer: { token: string };
  let agent: TestAgent;
  let second: TestAgent;
  let otherAgent: TestAgent;
  let base: string;
  const ids: string[] = [];

  const ingest = async (a: TestAgent, over: Record<string, unknown>, prompt = 'Can I get a loan?') => {
    const res = await ctx.post(TRACES, { apiKey: a.key, body: traceBody(over, { prompt }) });
    expect([201, 202], res.body).toContain(res.statusCode);
    return res.json().data.id as string;
  };
  const decisions = (ref: string, token = owner.token, query: Record<string, string> = {}) =>
    ctx.get(at(ref, 'decisions'), { token, query });

  beforeAll(async () => {
    ctx = await TestContext.create();
    owner = await ctx.register({ organizationName: 'Lenders' });
    other = await ctx.register({ organizationName: 'Elsewhere' });
    await ctx.setPlan(owner.organization.id, 'enterprise');
    admin = await ctx.addMember(owner.organization.id, 'admin');
    member = await ctx.addMember(owner.organization.id, 'member');
    viewer = await ctx.addMember(owner.organization.id, 'viewer');
    agent = await ctx.newAgent(owner.organization.id, 'Loan bot');
    second = await ctx.newAgent(owner.organization.id, 'Fraud bot');
    otherAgent = await ctx.newAgent(other.organization.id, 'Other bot');
    await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(ctx.app.getHttpServer().address() as AddressInfo).port}`;

    ids.push(await ingest(agent, { subjectRef: REF }, 'first'));
    ids.push(await ingest(second, { subjectRef: REF }, 'second'));
    const exporter = new OTLPTraceExporter({ url: base + OTLP, headers: { 'X-API-Key': agent.key } });
    const result = await exportWith(exporter, recordSpans([chatSpan('over otlp', REF)]));
    await exporter.shutdown();
    expect(result.code).toBe(0);
    const otlp = await rowsOf<{ id: string }>(
      ctx,
      sql`select id from traces where input_context->>'prompt' = 'over otlp'`,
    );
    expect(otlp).toHaveLength(1);
    ids.push(otlp[0]!.id);
    await ingest(agent, { subjectRef: 'someone else' }, 'bystander');
    await ingest(agent, {}, 'no subject');
    await ingest(otherAgent, { subjectRef: REF }, 'other organization');
  });
  afterAll(async () => ctx?.close());

  describe('subjectRef at ingestion', () => {
    it('is stored as an HMAC, never in clear, and shown as hasSubject', async () => {
      const t = (await ctx.get(`${TRACES}/${ids[0]}`, { token: owner.token })).json().data;
      expect(t.hasSubject).toBe(true);
      expect(JSON.stringify(t)).not.toContain('0042');
      const hashes = await rowsOf<{ subject_hash: string }>(
        ctx,
        sql`select distinct subject_hash from traces where subject_hash is not null`,
      );
      expect(hashes.length).toBeGreaterThan(0);
      for (const { subject_hash: hash } of hashes) expect(hash).toMatch(/^[0-9a-f]{64}$/);
      // The same reference in two organizations gives two hashes (one key per organization).
      const owners = await countOf(
        ctx,
        sql`select count(distinct subject_hash)::int as n from traces
            where input_context->>'prompt' in ('first', 'other organization')`,
      );
      expect(owners).toBe(2);
      // Nowhere in a trace's row, whether sent over HTTP or OTLP (a hash may contain '0042' by chance: the whole
      // reference is looked for).
      expect(
        await countOf(ctx, sql`select count(*)::int as n from traces t where t::text like ${`%${REF}%`}`),
      ).toBe(0);
    });

    it('refuses a subjectRef that is empty, too long or not a string, storing nothing', async () => {
      for (const subjectRef of ['', 'x'.repeat(201), 42, { id: 1 }]) {
        const res = await ctx.post(TRACES, { apiKey: agent.key, body: traceBody({ subjectRef }) });
        expectErrorEnvelope(res, 400, 'VALIDATION_ERROR');
        expect(res.json().details).toEqual([expect.objectContaining({ field: 'subjectRef' })]);
      }
      expect((await decisions('x'.repeat(200))).json().data).toEqual([]);
    });

    it('reads governance.subject.ref over OTLP, and rejects a span whose reference is too long', async () => {
      const exporter = new OTLPTraceExporter({ url: base + OTLP, headers: { 'X-API-Key': second.key } });
      const result = await exportWith(
        exporter,
        recordSpans([chatSpan('numeric ref', 90210), chatSpan('long ref', 'y'.repeat(201))]),
      );
      await exporter.shutdown();
      expect(result.code).toBe(0);
      const numeric = (await decisions('90210')).json().data;
      expect(numeric).toHaveLength(1);
      expect(numeric[0].inputContext.prompt).toBe('numeric ref');
      // The span whose reference is too long is not stored; the other span of the same export is.
      expect(
        await countOf(
          ctx,
          sql`select count(*)::int as n from traces where input_context->>'prompt' = 'long ref'`,
        ),
      ).toBe(0);
      expect(
        await countOf(
          ctx,
          sql`select count(*)::int as n from traces where input_context->>'prompt' = 'numeric ref'`,
        ),
      ).toBe(1);
    });
  });

  describe('GET /subjects/:ref/decisions', () => {
    it('lists the decisions about the reference across agents and sources, newest first, and audits it', async () => {
      const res = await decisions(REF);
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json();
      expect(body.data.map((t: { id: string }) => t.id).sort()).toEqual([...ids].sort());
      expect(new Set(body.data.map((t: { agentId: string }) => t.agentId))).toEqual(
        new Set([agent.id, second.id]),
      );
      expect(body.data.every((t: { hasSubject: boolean }) => t.hasSubject)).toBe(true);
      expect(body.pagination).toMatchObject({ page: 1, limit: 20, total: 3 });
      const times = body.data.map((t: { createdAt: string }) => t.createdAt);
      expect([...times].sort().reverse()).toEqual(times);
      const paged = (await decisions(REF, owner.token, { limit: '2', page: '2' })).json();
      expect(paged.data).toHaveLength(1);
      expect(paged.pagination.total).toBe(3);

      const audit = await auditEntriesOf(ctx, owner.organization.id, 'subject.accessed');
      expect(audit.length).toBeGreaterThanOrEqual(2);
      const mine = audit.find((e) => (e.metadata as { decisions: number }).decisions === 3);
      expect(mine).toMatchObject({ targetType: 'subject', userId: owner.user.id });
      expect(mine!.targetId).toMatch(/^[0-9a-f]{64}$/);
      expect(mine!.metadata).toEqual({ what: 'decisions', decisions: 3, page: 1 });
      expect(JSON.stringify(audit)).not.toContain('0042');
    });

    it('is for owners and admins; another organization sees none of them', async () => {
      expect((await decisions(REF, admin.token)).statusCode).toBe(200);
      expectErrorEnvelope(await decisions(REF, member.token), 403, 'FORBIDDEN');
      expectErrorEnvelope(await decisions(REF, viewer.token), 403, 'FORBIDDEN');
      expectErrorEnvelope(await ctx.get(at(REF, 'decisions'), { apiKey: agent.key }), 403, 'FORBIDDEN');
      expectErrorEnvelope(await ctx.get(at(REF, 'decisions')), 401, 'UNAUTHORIZED');
      const theirs = (await decisions(REF, other.token)).json().data;
      expect(theirs).toHaveLength(1);
      expect(theirs[0].inputContext.prompt).toBe('other organization');
      expectErrorEnvelope(await decisions('z'.repeat(201)), 400, 'VALIDATION_ERROR');
      expectErrorEnvelope(await decisions(REF, owner.token, { limit: 'x' }), 400, 'VALIDATION_ERROR');
    });
  });

  describe('legal holds', () => {
    const HELD = 'held-person';
    let heldIds: string[];

    it('is for owners; a hold blocks erasure and retention purges until it is lifted', async () => {
      heldIds = [
        await ingest(agent, { subjectRef: HELD }, 'held 1'),
        await ingest(second, { subjectRef: HELD }, 'held 2'),
      ];
      const loose = await ingest(agent, {}, 'loose');
      expectErrorEnvelope(await ctx.post(at(HELD, 'hold'), { token: admin.token }), 403, 'FORBIDDEN');
      expectErrorEnvelope(
        await ctx.request('DELETE', at(HELD, 'hold'), { token: owner.token }),
        404,
        'NOT_FOUND',
      );

      const placed = await ctx.post(at(HELD, 'hold'), { token: owner.token });
      expect(placed.statusCode, placed.body).toBe(200);
      expect(placed.json().data).toEqual({ held: true, since: ctx.clock.now().toISOString() });
      // Idempotent: placed once, audited once.
      expect((await ctx.post(at(HELD, 'hold'), { token: owner.token })).statusCode).toBe(200);
      expect(await auditEntriesOf(ctx, owner.organization.id, 'subject.hold_placed')).toHaveLength(1);

      expectErrorEnvelope(
        await ctx.post(at(HELD, 'erasure'), { token: owner.token }),
        409,
        'SUBJECT_ON_HOLD',
      );
      expect(await auditEntriesOf(ctx, owner.organization.id, 'subject.erasure_requested')).toHaveLength(0);

      // A purge of everything up to now keeps the held subject's traces, and deletes the others.
      ctx.clock.advance(1000);
      const purge = await ctx.post(PURGE, {
        token: owner.token,
        body: { before: ctx.clock.now().toISOString() },
      });
      expect(purge.statusCode, purge.body).toBe(200);
      for (const id of heldIds)
        expect((await ctx.get(`${TRACES}/${id}`, { token: owner.token })).statusCode).toBe(200);
      expect((await ctx.get(`${TRACES}/${loose}`, { token: owner.token })).statusCode).toBe(404);

      const lifted = await ctx.request('DELETE', at(HELD, 'hold'), { token: owner.token });
      expect(lifted.statusCode, lifted.body).toBe(200);
      expect(lifted.json().data).toEqual({ held: false, since: null });
      expect(await auditEntriesOf(ctx, owner.organization.id, 'subject.hold_lifted')).toHaveLength(1);

      const erase = await ctx.post(at(HELD, 'erasure'), { token: owner.token });
      expect(erase.statusCode, erase.body).toBe(202);
      for (
        let i = 0;
        i < 100 && (await ctx.get(at(HELD, 'erasure'), { token: owner.token })).json().data.status !== 'done';
        i++
      )
        await new Promise((r) => setTimeout(r, 50));
      const state = (await ctx.get(at(HELD, 'erasure'), { token: admin.token })).json().data;
      expect(state).toMatchObject({ jobId: erase.json().data.jobId, status: 'done', tracesErased: 2 });
      const purgeAgain = await ctx.post(PURGE, {
        token: owner.token,
        body: { before: ctx.clock.now().toISOString() },
      });
      expect(purgeAgain.json().data.purged).toBeGreaterThanOrEqual(2);
      for (const id of heldIds)
        expect((await ctx.get(`${TRACES}/${id}`, { token: owner.token })).statusCode).toBe(404);
    });
  });

  describe('GET /traces/:id/verify', () => {
    const verify = async (id: string, token = owner.token) => {
      const res = await ctx.get(`${TRACES}/${id}/verify`, { token });
      expect(res.statusCode, res.body).toBe(200);
      return res.json().data as { status: string; auditEntryId: string | null; contentHash: string | null };
    };

    it('finds content altered in the database, and follows a CPI correction', async () => {
      const id = await ingest(agent, { rationale: 'Income too low' }, 'verify me');
      const first = await verify(id, viewer.token);
      expect(first).toMatchObject({ status: 'intact', contentHash: expect.stringMatching(/^[0-9a-f]{64}$/) });
      const [entry] = await auditEntriesOf(ctx, owner.organization.id, 'trace.approved', id);
      expect(first.auditEntryId).toBe(entry!.id);
      expect(entry!.metadata.contentHash).toBe(first.contentHash);

      const key = await workspaceKey(ctx, owner);
      const cpi = await ctx.post(CPI_INGEST, {
        apiKey: key.key,
        body: { traceId: id, correctedDecision: 'approve', feedbackNotes: 'Income verified' },
      });
      expect(cpi.statusCode, cpi.body).toBe(200);
      const corrected = await verify(id);
      expect(corrected.status).toBe('intact');
      expect(corrected.contentHash).not.toBe(first.contentHash);
      const [cpiEntry] = await auditEntriesOf(ctx, owner.organization.id, 'cpi.corrected', id);
      expect(corrected.auditEntryId).toBe(cpiEntry!.id);
      expect(JSON.stringify(cpiEntry!.metadata)).not.toContain('Income');

      await ctx.db.db.execute(
        sql`update traces set output_decision = jsonb_set(output_decision, '{text}', '"Approved."') where id = ${id}`,
      );
      expect((await verify(id)).status).toBe('altered');
      // Pointing the trace at another entry does not hide it.
      await ctx.db.db.execute(sql`update traces set content_entry_id = ${entry!.id} where id = ${id}`);
      expect((await verify(id)).status).toBe('altered');
      await ctx.db.db.execute(sql`update traces set content_entry_id = null where id = ${id}`);
      expect((await verify(id)).status).toBe('altered');
    });

    it('says unhashed for a trace stored before content hashing, and 404 across organizations', async () => {
      const id = await ingest(agent, {}, 'legacy');
      await ctx.db.db.execute(
        sql`update traces set content_salt = null, content_entry_id = null where id = ${id}`,
      );
      expect(await verify(id)).toEqual({
        traceId: id,
        status: 'unhashed',
        auditEntryId: null,
        contentHash: null,
      });
      expectErrorEnvelope(await ctx.get(`${TRACES}/${id}/verify`, { token: other.token }), 404, 'NOT_FOUND');
      expectErrorEnvelope(await ctx.get(`${TRACES}/nope/verify`, { token: owner.token }), 404, 'NOT_FOUND');
    });
  });
});
