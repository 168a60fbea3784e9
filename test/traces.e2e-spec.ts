import { and, count, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditEntries } from '../libs/platform/src/audit/audit.schema.js';
import { reviewItems } from '../libs/governance/src/review/review-item.schema.js';
import { traceIdempotencyKeys, traces } from '../libs/governance/src/traces/trace.schema.js';
import { type Registered, TestContext } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';
import { insertAgent, insertPolicy, type TestAgent } from './support/governance.js';

const TRACES = '/api/v1/traces';
const ID = /^[0-9a-f]{24}$/;
const HOUR = 60 * 60 * 1000;

function traceBody(over: Record<string, unknown> = {}, input = {}, output = {}): Record<string, unknown> {
  return {
    inputContext: { prompt: 'What is the refund window for order 1234?', ...input },
    outputDecision: { action: 'llm_response', text: 'Refunds are accepted within 30 days.', ...output },
    confidence: 0.9,
    ...over,
  };
}

describe('traces', () => {
  let ctx: TestContext;
  let owner: Registered;
  let other: Registered;
  let plain: TestAgent;
  let guarded: TestAgent;
  let otherAgent: TestAgent;
  let blockPolicyId: string;
  let flagPolicyId: string;

  beforeAll(async () => {
    ctx = await TestContext.create();
    owner = await ctx.register({ organizationName: 'Trace Owners' });
    other = await ctx.register({ organizationName: 'Other Org' });
    plain = await insertAgent(ctx, owner.organization.id, 'Plain agent');
    guarded = await insertAgent(ctx, owner.organization.id, 'Guarded agent');
    otherAgent = await insertAgent(ctx, other.organization.id, 'Other agent');
    // Policies apply to the guarded agent only, so every other test ingests without matching any.
    blockPolicyId = await insertPolicy(ctx, owner.organization.id, {
      name: 'No card numbers',
      outcome: 'block',
      agentIds: [guarded.id],
      conditions: [{ field: 'inputContext.prompt', operator: 'contains', value: 'card number' }],
    });
    flagPolicyId = await insertPolicy(ctx, owner.organization.id, {
      name: 'Low confidence',
      outcome: 'flag',
      agentIds: [guarded.id],
      conditions: [{ field: 'confidence', operator: 'lt', value: 0.7 }],
    });
    await insertPolicy(ctx, owner.organization.id, {
      name: 'Nested quantifier',
      outcome: 'flag',
      agentIds: [guarded.id],
      conditions: [{ field: 'inputContext.prompt', operator: 'matches', value: '^(a+)+$' }],
    });
  });
  afterAll(async () => ctx?.close());

  const post = (key: string, body: unknown, headers: Record<string, string> = {}) =>
    ctx.post(TRACES, { apiKey: key, body, headers });

  async function traceRow(id: string) {
    const [row] = await ctx.db.db.select().from(traces).where(eq(traces.id, id));
    return row;
  }

  async function auditFor(traceId: string) {
    return ctx.db.db.select().from(auditEntries).where(eq(auditEntries.targetId, traceId));
  }

  async function traceCount(organizationId = owner.organization.id): Promise<number> {
    const [row] = await ctx.db.db
      .select({ n: count() })
      .from(traces)
      .where(eq(traces.organizationId, organizationId));
    return row!.n;
  }

  describe('POST /traces outcomes', () => {
    it('returns 201 with the approved trace, stores it under the schema version and audits trace.approved', async () => {
      const res = await post(plain.key, traceBody({ metadata: { channel: 'web' }, rationale: 'policy doc' }));
      expect(res.statusCode, res.body).toBe(201);
      const body = res.json();
      expect(body).toEqual({
        success: true,
        data: {
          id: expect.stringMatching(ID),
          status: 'approved',
          confidence: 0.9,
          message: 'Trace recorded and approved',
        },
      });
      const row = await traceRow(body.data.id);
      expect(row).toMatchObject({
        organizationId: owner.organization.id,
        agentId: plain.id,
        status: 'approved',
        schemaVersion: '2026-04-11',
        rationale: 'policy doc',
        metadata: { channel: 'web' },
        policyResults: [],
        reviewItemId: null,
        searchText: 'What is the refund window for order 1234?\nRefunds are accepted within 30 days.',
      });
      const audit = await auditFor(body.data.id);
      expect(audit).toHaveLength(1);
      expect(audit[0]).toMatchObject({
        eventType: 'trace.approved',
        organizationId: owner.organization.id,
        actor: { type: 'agent', id: plain.id, email: null },
        targetType: 'trace',
      });
    });

    it('returns 202 SVC_FLAGGED_FOR_REVIEW, stores the flagged trace with a pending review item, audits trace.flagged', async () => {
      const res = await post(guarded.key, traceBody({ confidence: 0.5 }));
      expect(res.statusCode, res.body).toBe(202);
      const body = res.json();
      expect(body).toEqual({
        success: true,
        code: 'SVC_FLAGGED_FOR_REVIEW',
        data: {
          id: expect.stringMatching(ID),
          status: 'flagged',
          confidence: 0.5,
          message: 'Trace flagged for human review',
          reviewItemId: expect.stringMatching(ID),
        },
      });
      const row = await traceRow(body.data.id);
      expect(row).toMatchObject({
        status: 'flagged',
        reviewItemId: body.data.reviewItemId,
        policyResults: [{ policyId: flagPolicyId, name: 'Low confidence', outcome: 'flag' }],
      });
      const [item] = await ctx.db.db
        .select()
        .from(reviewItems)
        .where(eq(reviewItems.id, body.data.reviewItemId));
      expect(item).toMatchObject({
        organizationId: owner.organization.id,
        traceId: body.data.id,
        agentId: guarded.id,
        status: 'pending',
      });
      const audit = await auditFor(body.data.id);
      expect(audit.map((a) => a.eventType)).toEqual(['trace.flagged']);
    });

    it('returns 403 SVC_BLOCKED_BY_POLICY naming the policies, stores the blocked trace and audits trace.blocked', async () => {
      const res = await post(guarded.key, traceBody({}, { prompt: 'My card number is 4111 1111 1111 1111' }));
      expect(res.statusCode, res.body).toBe(403);
      const body = res.json();
      expect(body).toEqual({
        success: false,
        code: 'SVC_BLOCKED_BY_POLICY',
        error: 'Trace blocked by policy: No card numbers',
        data: {
          id: expect.stringMatching(ID),
          status: 'blocked',
          confidence: 0.9,
          policies: [{ policyId: blockPolicyId, name: 'No card numbers', outcome: 'block' }],
        },
      });
      const row = await traceRow(body.data.id);
      expect(row).toMatchObject({ status: 'blocked', reviewItemId: null });
      const audit = await auditFor(body.data.id);
      expect(audit.map((a) => a.eventType)).toEqual(['trace.blocked']);
      const items = await ctx.db.db.select().from(reviewItems).where(eq(reviewItems.traceId, body.data.id));
      expect(items).toHaveLength(0);
    });

    it('estimates the confidence from the output text when absent, before the policies run', async () => {
      const res = await post(guarded.key, {
        inputContext: { prompt: 'Is the warehouse open on Sunday?' },
        outputDecision: { action: 'llm_response', text: 'I think it might be open.' },
      });
      // 0.9 − 2 × 0.15 hedging = 0.6, under the 0.7 flag threshold.
      expect(res.statusCode, res.body).toBe(202);
      expect(res.json().data.confidence).toBe(0.6);
      const plainRes = await post(plain.key, {
        inputContext: { prompt: 'Hello' },
        outputDecision: { action: 'llm_response', text: '' },
      });
      expect(plainRes.statusCode, plainRes.body).toBe(201);
      expect(plainRes.json().data.confidence).toBe(0.6);
    });

    it('evaluates a nested-quantifier regex on a 50,000-character prompt quickly', async () => {
      const started = Date.now();
      const res = await post(guarded.key, traceBody({}, { prompt: 'a'.repeat(50_000) }));
      expect(Date.now() - started).toBeLessThan(2000);
      expect(res.statusCode, res.body).toBe(202);
      expect(res.json().data.status).toBe('flagged');
      const noMatch = await post(guarded.key, traceBody({}, { prompt: 'a'.repeat(49_999) + '!' }));
      expect(noMatch.statusCode, noMatch.body).toBe(201);
      expect(Date.now() - started).toBeLessThan(4000);
    });
  });

  describe('POST /traces access', () => {
    it('accepts a body agentId equal to the key’s agent and refuses another with 403 FORBIDDEN', async () => {
      expect((await post(plain.key, traceBody({ agentId: plain.id }))).statusCode).toBe(201);
      const before = await traceCount();
      expectErrorEnvelope(await post(plain.key, traceBody({ agentId: guarded.id })), 403, 'FORBIDDEN');
      expectErrorEnvelope(await post(plain.key, traceBody({ agentId: otherAgent.id })), 403, 'FORBIDDEN');
      expect(await traceCount()).toBe(before);
    });

    it('refuses a JWT with 403 FORBIDDEN and a missing key with 401', async () => {
      expectErrorEnvelope(
        await ctx.post(TRACES, { token: owner.token, body: traceBody() }),
        403,
        'FORBIDDEN',
      );
      expectErrorEnvelope(await ctx.post(TRACES, { body: traceBody() }), 401, 'UNAUTHORIZED');
    });

    it('lets a writable workspace key ingest for an agent in its scope, with agentId required', async () => {
      const keyRes = await ctx.post('/api/v1/auth/keys', {
        token: owner.token,
        body: { name: 'ingest', scope: { agentIds: [plain.id] } },
      });
      expect(keyRes.statusCode, keyRes.body).toBe(201);
      const key = keyRes.json().data.key as string;
      const missing = expectErrorEnvelope(await post(key, traceBody()), 400, 'VALIDATION_ERROR');
      expect(missing.details).toEqual([{ field: 'agentId', message: expect.any(String) }]);
      expectErrorEnvelope(await post(key, traceBody({ agentId: guarded.id })), 403, 'FORBIDDEN');
      const ok = await post(key, traceBody({ agentId: plain.id }));
      expect(ok.statusCode, ok.body).toBe(201);
      const [audit] = await auditFor(ok.json().data.id);
      expect(audit!.actor).toMatchObject({ type: 'api_key' });

      const readOnly = await ctx.post('/api/v1/auth/keys', {
        token: owner.token,
        body: { name: 'ro', scope: { readOnly: true } },
      });
      expectErrorEnvelope(
        await post(readOnly.json().data.key, traceBody({ agentId: plain.id })),
        403,
        'FORBIDDEN',
      );
    });

    it('returns 400 naming agentId when a workspace key names an agent absent from the organization', async () => {
      const keyRes = await ctx.post('/api/v1/auth/keys', { token: owner.token, body: { name: 'unscoped' } });
      const { key, id: keyId } = keyRes.json().data as { key: string; id: string };
      const before = await traceCount();
      // Another organization's agent, and an id that exists in the organization but names a key, not an agent.
      for (const agentId of [otherAgent.id, keyId]) {
        const body = expectErrorEnvelope(await post(key, traceBody({ agentId })), 400, 'VALIDATION_ERROR');
        expect(body.details).toEqual([{ field: 'agentId', message: expect.any(String) }]);
      }
      expect(await traceCount()).toBe(before);
    });
  });

  describe('POST /traces validation (schema 2026-04-11)', () => {
    const ctxObject = (bytes: number) => ({ d: 'x'.repeat(bytes - '{"d":""}'.length) });
    const cases: [string, (n: 'ok' | 'over') => Record<string, unknown>][] = [
      ['inputContext.prompt', (n) => traceBody({}, { prompt: 'p'.repeat(n === 'ok' ? 50_000 : 50_001) })],
      [
        'inputContext.systemPrompt',
        (n) => traceBody({}, { systemPrompt: 's'.repeat(n === 'ok' ? 50_000 : 50_001) }),
      ],
      ['inputContext.context', (n) => traceBody({}, { context: ctxObject(n === 'ok' ? 102_400 : 102_401) })],
      [
        'inputContext.conversationId',
        (n) => traceBody({}, { conversationId: 'c'.repeat(n === 'ok' ? 256 : 257) }),
      ],
      [
        'outputDecision.actionObject',
        (n) => traceBody({}, {}, { actionObject: ctxObject(n === 'ok' ? 10_240 : 10_241) }),
      ],
      [
        'outputDecision.rationale',
        (n) => traceBody({}, {}, { rationale: 'r'.repeat(n === 'ok' ? 50_000 : 50_001) }),
      ],
      [
        'outputDecision.alternatives',
        (n) =>
          traceBody(
            {},
            {},
            { alternatives: Array.from({ length: n === 'ok' ? 10 : 11 }, (_, i) => `alt ${i}`) },
          ),
      ],
      [
        'outputDecision.toolCalls',
        (n) =>
          traceBody(
            {},
            {},
            {
              toolCalls: Array.from({ length: n === 'ok' ? 50 : 51 }, (_, i) => ({
                name: `tool_${i}`,
                arguments: { i },
              })),
            },
          ),
      ],
    ];

    it.each(cases)(
      'accepts %s at its limit and refuses it one past with 400 naming the field',
      async (field, build) => {
        const ok = await post(plain.key, build('ok'));
        expect(ok.statusCode, ok.body.slice(0, 300)).toBe(201);
        const before = await traceCount();
        const over = expectErrorEnvelope(await post(plain.key, build('over')), 400, 'VALIDATION_ERROR');
        expect(over.details).toEqual([{ field, message: expect.any(String) }]);
        expect(await traceCount()).toBe(before);
      },
    );

    it('measures byte limits on the UTF-8 encoding (multi-byte characters count by bytes)', async () => {
      // "é" is 2 bytes: 5,117 of them plus the wrapper is 10,242 bytes, over 10 KiB though only 5,125 characters.
      const res = await post(plain.key, traceBody({}, {}, { actionObject: { d: 'é'.repeat(5117) } }));
      const body = expectErrorEnvelope(res, 400, 'VALIDATION_ERROR');
      expect(body.details).toEqual([{ field: 'outputDecision.actionObject', message: expect.any(String) }]);
    });

    it('refuses text PostgreSQL cannot store (NUL, unpaired surrogates) with 400, alone or among concurrent traces', async () => {
      const before = await traceCount();
      const poisoned = [
        JSON.stringify(traceBody({ metadata: { k: 'a\ud800b' } })),
        JSON.stringify(traceBody({ metadata: { ['\udfff']: 1 } })),
        JSON.stringify(traceBody({}, { prompt: 'nul \u0000 inside' })),
      ];
      const responses = await Promise.all([
        ...poisoned.map((payload) =>
          ctx.post(TRACES, { apiKey: plain.key, payload, headers: { 'content-type': 'application/json' } }),
        ),
        ...Array.from({ length: 6 }, () => post(plain.key, traceBody())),
      ]);
      const fields = responses
        .slice(0, 3)
        .map(
          (res) =>
            (expectErrorEnvelope(res, 400, 'VALIDATION_ERROR').details as { field: string }[])[0]?.field,
        );
      expect(fields).toEqual(['metadata.k', 'metadata', 'inputContext.prompt']);
      responses.slice(3).forEach((res) => expect(res.statusCode, res.body).toBe(201));
      expect(await traceCount()).toBe(before + 6);
    });

    it('names every missing or mistyped field', async () => {
      const res = await post(plain.key, {
        inputContext: { systemPrompt: 3 },
        outputDecision: { text: 'x' },
        confidence: 1.5,
        extra: true,
      });
      const body = expectErrorEnvelope(res, 400, 'VALIDATION_ERROR');
      const fields = (body.details as { field: string }[]).map((d) => d.field).sort();
      expect(fields).toEqual(
        [
          'confidence',
          'extra',
          'inputContext.prompt',
          'inputContext.systemPrompt',
          'outputDecision.action',
        ].sort(),
      );
    });

    it('refuses an exactly requested unknown schema version with 400 VERSION_UNSUPPORTED and stores nothing', async () => {
      const before = await traceCount();
      const res = await post(plain.key, traceBody(), { 'x-svc-version': '2025-01-01' });
      expectErrorEnvelope(res, 400, 'VERSION_UNSUPPORTED');
      expect(await traceCount()).toBe(before);
      const pinned = await post(plain.key, traceBody(), { 'x-svc-version': '2026-04-11' });
      expect(pinned.statusCode).toBe(201);
      expect((await traceRow(pinned.json().data.id))!.schemaVersion).toBe('2026-04-11');
    });
  });

  describe('POST /traces idempotency', () => {
    it('creates exactly one trace under 20 concurrent requests with one key; the others get 409 with its id', async () => {
      const key = 'concurrent-key-1';
      const before = await traceCount();
      const responses = await Promise.all(
        Array.from({ length: 20 }, () => post(plain.key, traceBody(), { 'idempotency-key': key })),
      );
      const created = responses.filter((r) => [201, 202, 403].includes(r.statusCode));
      const duplicates = responses.filter((r) => r.statusCode === 409);
      expect(created).toHaveLength(1);
      expect(duplicates).toHaveLength(19);
      const id = created[0]!.json().data.id;
      for (const dup of duplicates) {
        expect(dup.json()).toEqual({
          success: false,
          code: 'SVC_DUPLICATE_REQUEST',
          error: expect.any(String),
          data: { id },
        });
      }
      expect(await traceCount()).toBe(before + 1);
      const keys = await ctx.db.db
        .select()
        .from(traceIdempotencyKeys)
        .where(
          and(
            eq(traceIdempotencyKeys.organizationId, owner.organization.id),
            eq(traceIdempotencyKeys.key, key),
          ),
        );
      expect(keys).toEqual([expect.objectContaining({ traceId: id })]);
    });

    it('returns 409 with the first trace id for a blocked first request too', async () => {
      const body = traceBody({}, { prompt: 'card number 4111' });
      const first = await post(guarded.key, body, { 'idempotency-key': 'blocked-key' });
      expect(first.statusCode).toBe(403);
      const again = await post(guarded.key, body, { 'idempotency-key': 'blocked-key' });
      expect(again.statusCode).toBe(409);
      expect(again.json().data).toEqual({ id: first.json().data.id });
    });

    it('honours a key for 24 hours, then accepts it again as a new trace', async () => {
      const headers = { 'idempotency-key': 'expiring-key' };
      const first = await post(plain.key, traceBody(), headers);
      expect(first.statusCode).toBe(201);
      ctx.clock.advance(24 * HOUR - 1000);
      const within = await post(plain.key, traceBody(), headers);
      expect(within.statusCode).toBe(409);
      expect(within.json().data.id).toBe(first.json().data.id);
      ctx.clock.advance(2000);
      const after = await post(plain.key, traceBody(), headers);
      expect(after.statusCode, after.body).toBe(201);
      expect(after.json().data.id).not.toBe(first.json().data.id);
      const repeat = await post(plain.key, traceBody(), headers);
      expect(repeat.statusCode).toBe(409);
      expect(repeat.json().data.id).toBe(after.json().data.id);
    });

    it('scopes keys per organization', async () => {
      const headers = { 'idempotency-key': 'shared-key' };
      expect((await post(plain.key, traceBody(), headers)).statusCode).toBe(201);
      expect((await post(otherAgent.key, traceBody(), headers)).statusCode).toBe(201);
    });

    it('accepts a 255-character key and refuses a 256-character one with 400', async () => {
      expect((await post(plain.key, traceBody(), { 'idempotency-key': 'k'.repeat(255) })).statusCode).toBe(
        201,
      );
      const res = await post(plain.key, traceBody(), { 'idempotency-key': 'k'.repeat(256) });
      const body = expectErrorEnvelope(res, 400, 'VALIDATION_ERROR');
      expect(body.details).toEqual([{ field: 'Idempotency-Key', message: expect.any(String) }]);
    });
  });

  describe('GET /traces', () => {
    let listOwner: Registered;
    let a1: TestAgent;
    let a2: TestAgent;
    const ids: string[] = [];
    let startedAt: Date;

    beforeAll(async () => {
      listOwner = await ctx.register({ organizationName: 'Listing Org' });
      const org = listOwner.organization.id;
      a1 = await insertAgent(ctx, org, 'L1');
      a2 = await insertAgent(ctx, org, 'L2');
      await insertPolicy(ctx, org, {
        outcome: 'flag',
        conditions: [{ field: 'inputContext.prompt', operator: 'contains', value: 'flagme' }],
      });
      await insertPolicy(ctx, org, {
        outcome: 'block',
        conditions: [{ field: 'inputContext.prompt', operator: 'contains', value: 'blockme' }],
      });
      startedAt = ctx.clock.now();
      // Oldest first: a1 approved, a2 flagged, a1 blocked, a2 approved, a1 approved.
      const plan: [TestAgent, string][] = [
        [a1, 'first'],
        [a2, 'flagme second'],
        [a1, 'blockme third'],
        [a2, 'fourth'],
        [a1, 'fifth'],
      ];
      for (const [agent, prompt] of plan) {
        ctx.clock.advance(60_000);
        const res = await post(agent.key, traceBody({}, { prompt }));
        expect([201, 202, 403]).toContain(res.statusCode);
        ids.push(res.json().data.id);
      }
    });

    const list = (query: Record<string, string> = {}, token = listOwner.token) =>
      ctx.get(TRACES, { token, query });

    it('lists newest first with page 1, limit 20 by default', async () => {
      const res = await list();
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json();
      expect(body.data.map((t: { id: string }) => t.id)).toEqual([...ids].reverse());
      expect(body.pagination).toEqual({ page: 1, limit: 20, total: 5, totalPages: 1 });
      expect(Object.keys(body.data[0]).sort()).toEqual(
        [
          'id',
          'organizationId',
          'agentId',
          'status',
          'confidence',
          'inputContext',
          'outputDecision',
          'metadata',
          'rationale',
          'schemaVersion',
          'humanOverride',
          'policyResults',
          'reviewItemId',
          'createdAt',
          'updatedAt',
        ].sort(),
      );
    });

    it('filters by agentId, status, from and to', async () => {
      const agentRes = await list({ agentId: a1.id });
      expect(agentRes.json().data.map((t: { id: string }) => t.id)).toEqual([ids[4], ids[2], ids[0]]);
      expect((await list({ status: 'flagged' })).json().data.map((t: { id: string }) => t.id)).toEqual([
        ids[1],
      ]);
      expect((await list({ status: 'blocked' })).json().data.map((t: { id: string }) => t.id)).toEqual([
        ids[2],
      ]);
      expect((await list({ status: 'success' })).json().data).toEqual([]);
      const from = new Date(startedAt.getTime() + 2 * 60_000).toISOString();
      const to = new Date(startedAt.getTime() + 4 * 60_000).toISOString();
      expect((await list({ from, to })).json().data.map((t: { id: string }) => t.id)).toEqual([
        ids[3],
        ids[2],
        ids[1],
      ]);
    });

    it('pages, and clamps a limit above 100 to 100', async () => {
      const page2 = (await list({ page: '2', limit: '2' })).json();
      expect(page2.data.map((t: { id: string }) => t.id)).toEqual([ids[2], ids[1]]);
      expect(page2.pagination).toEqual({ page: 2, limit: 2, total: 5, totalPages: 3 });
      expect((await list({ limit: '500' })).json().pagination.limit).toBe(100);
    });

    it('returns 400 VALIDATION_ERROR for non-numeric paging, an unknown status or a malformed date', async () => {
      const queries: Record<string, string>[] = [
        { limit: 'ten' },
        { page: 'x' },
        { page: '0' },
        { status: 'pending' },
        { from: 'yesterday' },
        { to: '2026-13-45' },
      ];
      for (const query of queries) {
        expectErrorEnvelope(await list(query), 400, 'VALIDATION_ERROR');
      }
    });

    it('is readable by a viewer, and a workspace key scoped to an agent sees only that agent', async () => {
      const viewer = await ctx.addMember(listOwner.organization.id, 'viewer');
      expect((await list({}, viewer.token)).json().pagination.total).toBe(5);
      const keyRes = await ctx.post('/api/v1/auth/keys', {
        token: listOwner.token,
        body: { name: 'scoped', scope: { agentIds: [a2.id] } },
      });
      const key = keyRes.json().data.key as string;
      const res = await ctx.get(TRACES, { apiKey: key });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data.map((t: { id: string }) => t.id)).toEqual([ids[3], ids[1]]);
      expectErrorEnvelope(
        await ctx.get(TRACES, { apiKey: key, query: { agentId: a1.id } }),
        403,
        'FORBIDDEN',
      );
      expectErrorEnvelope(await ctx.get(`${TRACES}/${ids[0]}`, { apiKey: key }), 404, 'NOT_FOUND');
    });

    it('does not list another organization’s traces, and refuses agent keys', async () => {
      expect((await list({}, owner.token)).json().data.map((t: { id: string }) => t.id)).not.toContain(
        ids[0],
      );
      expectErrorEnvelope(await ctx.get(TRACES, { apiKey: a1.key }), 403, 'FORBIDDEN');
    });

    it('GET /traces/:id returns the trace object; another organization gets 404', async () => {
      const res = await ctx.get(`${TRACES}/${ids[1]}`, { token: listOwner.token });
      expect(res.statusCode, res.body).toBe(200);
      const trace = res.json().data;
      expect(trace).toEqual({
        id: ids[1],
        organizationId: listOwner.organization.id,
        agentId: a2.id,
        status: 'flagged',
        confidence: 0.9,
        inputContext: { prompt: 'flagme second' },
        outputDecision: { action: 'llm_response', text: 'Refunds are accepted within 30 days.' },
        metadata: {},
        rationale: null,
        schemaVersion: '2026-04-11',
        humanOverride: false,
        policyResults: [{ policyId: expect.stringMatching(ID), name: 'flag policy', outcome: 'flag' }],
        reviewItemId: expect.stringMatching(ID),
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
      expectErrorEnvelope(await ctx.get(`${TRACES}/${ids[1]}`, { token: owner.token }), 404, 'NOT_FOUND');
      expectErrorEnvelope(await ctx.get(`${TRACES}/not-an-id`, { token: owner.token }), 404, 'NOT_FOUND');
      expectErrorEnvelope(
        await ctx.get(`${TRACES}/${'0'.repeat(24)}`, { token: owner.token }),
        404,
        'NOT_FOUND',
      );
    });
  });

  describe('GET /traces/:id/similar', () => {
    let simOwner: Registered;
    let agent: TestAgent;
    const ingest = async (prompt: string, text: string) => {
      const res = await post(agent.key, traceBody({}, { prompt }, { text }));
      expect(res.statusCode, res.body).toBe(201);
      return res.json().data.id as string;
    };

    beforeAll(async () => {
      simOwner = await ctx.register({ organizationName: 'Similarity Org' });
      agent = await insertAgent(ctx, simOwner.organization.id, 'Support');
    });

    it('returns related traces of the organization, most similar first, excluding the trace itself', async () => {
      const base = await ingest(
        'How do I reset my account password?',
        'Use the reset password link on the login page.',
      );
      const close = await ingest(
        'How do I reset my account password quickly?',
        'Use the reset password link on the login page.',
      );
      const related = await ingest('Reset my password please', 'Click the reset password link.');
      const unrelated = await ingest('What is the weather in Lisbon tomorrow?', 'Sunny with light winds.');
      // Same text in another organization is never returned.
      await post(
        otherAgent.key,
        traceBody(
          {},
          { prompt: 'How do I reset my account password?' },
          { text: 'Use the reset password link on the login page.' },
        ),
      );

      const res = await ctx.get(`${TRACES}/${base}/similar`, { token: simOwner.token });
      expect(res.statusCode, res.body).toBe(200);
      const data = res.json().data as { id: string; similarity: number; excerpt: string; status: string }[];
      expect(data.map((d) => d.id)).toEqual([close, related]);
      expect(data.map((d) => d.id)).not.toContain(unrelated);
      expect(data[0]!.similarity).toBeGreaterThan(data[1]!.similarity);
      expect(data[0]).toEqual({
        id: close,
        status: 'approved',
        confidence: 0.9,
        similarity: expect.any(Number),
        createdAt: expect.any(String),
        excerpt: expect.stringContaining('How do I reset my account password quickly?'),
      });
      const limited = await ctx.get(`${TRACES}/${base}/similar`, {
        token: simOwner.token,
        query: { limit: '1' },
      });
      expect(limited.json().data.map((d: { id: string }) => d.id)).toEqual([close]);
    });

    it('answers 404 for another organization and 400 for a limit above 20', async () => {
      const id = await ingest('Where is my parcel?', 'It ships tomorrow.');
      expectErrorEnvelope(await ctx.get(`${TRACES}/${id}/similar`, { token: owner.token }), 404, 'NOT_FOUND');
      expectErrorEnvelope(
        await ctx.get(`${TRACES}/${id}/similar`, { token: simOwner.token, query: { limit: '21' } }),
        400,
        'VALIDATION_ERROR',
      );
    });
  });
});
