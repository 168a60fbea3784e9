import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reviewItems } from '../libs/governance/src/review/review-item.schema.js';
import { traceIdempotencyKeys } from '../libs/governance/src/traces/trace.schema.js';
import { type Registered, TestContext } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';
import { TRACES, traceBody, traceFixture, traceHelpers } from './support/traces-suite.js';
import { type TestAgent } from './support/builders.js';

const ID = /^[0-9a-f]{24}$/;
const HOUR = 60 * 60 * 1000;

describe('traces', () => {
  let ctx: TestContext;
  let owner: Registered;
  let plain: TestAgent;
  let guarded: TestAgent;
  let otherAgent: TestAgent;
  let blockPolicyId: string;
  let flagPolicyId: string;

  beforeAll(async () => {
    ctx = await TestContext.create();
    ({ owner, plain, guarded, otherAgent, blockPolicyId, flagPolicyId } = await traceFixture(ctx));
  });
  afterAll(async () => ctx?.close());

  const { post, traceRow, auditFor, traceCount } = traceHelpers(
    () => ctx,
    () => owner,
  );

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
});
