import { createHash } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { AgentKeyResolver } from '../libs/governance/src/agents/agent-key.resolver.js';
import { agents } from '../libs/governance/src/agents/agent.schema.js';
import { auditEntries } from '../libs/platform/src/audit/audit.schema.js';
import { traces, type TraceStatus } from '../libs/governance/src/traces/trace.schema.js';
import { apiKeys } from '../libs/identity/src/api-keys/api-key.schema.js';
import { newId, TransactionHost } from '#platform';
import { AgentKeysRepository } from '#identity';
import { type Registered, TestContext } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';
import { replicaHandle } from './support/database.js';

const AGENTS = '/api/v1/agents';
const AGENT_KEY_FORMAT = /^svc_agent_[A-Za-z0-9_-]{43}$/;

interface Agent {
  id: string;
  name: string;
  description: string | null;
  keyPrefix: string | null;
  createdBy: string | null;
  createdAt: string;
  updatedAt: string;
}
type CreatedAgent = Agent & { apiKey: string };

const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

describe('agents', () => {
  let ctx: TestContext;
  let owner: Registered;
  let other: Registered;

  beforeAll(async () => {
    ctx = await TestContext.create();
    owner = await ctx.register({ organizationName: 'Agent Owners' });
    other = await ctx.register({ organizationName: 'Other Org' });
  });
  afterAll(async () => ctx?.close());

  const org = () => owner.organization.id;
  const del = (url: string, options?: Parameters<TestContext['request']>[2]) =>
    ctx.request('DELETE', url, options);

  async function createAgent(body: unknown = { name: 'Bot' }, token = owner.token): Promise<CreatedAgent> {
    const res = await ctx.post(AGENTS, { token, body });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().data as CreatedAgent;
  }

  async function insertTrace(
    agentId: string,
    status: TraceStatus,
    confidence: number,
    options: { humanOverride?: boolean; organizationId?: string; createdAt?: Date } = {},
  ): Promise<string> {
    const id = newId();
    const at = options.createdAt ?? ctx.clock.now();
    await ctx.db.db.insert(traces).values({
      id,
      organizationId: options.organizationId ?? org(),
      agentId,
      status,
      confidence,
      inputContext: { prompt: 'hello' },
      outputDecision: { action: 'reply', text: 'hi' },
      metadata: {},
      schemaVersion: '2026-04-11',
      humanOverride: options.humanOverride ?? false,
      searchText: 'hello hi',
      createdAt: at,
      updatedAt: at,
    });
    return id;
  }

  async function auditEvents(targetId: string): Promise<string[]> {
    const rows = await ctx.db.db
      .select({ eventType: auditEntries.eventType })
      .from(auditEntries)
      .where(and(eq(auditEntries.organizationId, org()), eq(auditEntries.targetId, targetId)))
      .orderBy(auditEntries.sequence);
    return rows.map((row) => row.eventType);
  }

  describe('POST /agents', () => {
    it('returns the agent with its key once, stores only the hash and audits agent.created', async () => {
      const res = await ctx.post(AGENTS, {
        token: owner.token,
        body: { name: '  Support bot ', description: 'Triage' },
      });
      expect(res.statusCode, res.body).toBe(201);
      expect(res.headers['cache-control']).toBe('no-store');
      const data = res.json().data as CreatedAgent;
      expect(data).toEqual({
        id: expect.stringMatching(/^[0-9a-f]{24}$/),
        name: 'Support bot',
        description: 'Triage',
        keyPrefix: data.apiKey.slice(0, 'svc_agent_'.length + 12),
        createdBy: owner.user.id,
        createdAt: ctx.clock.now().toISOString(),
        updatedAt: ctx.clock.now().toISOString(),
        apiKey: expect.stringMatching(AGENT_KEY_FORMAT),
      });

      const [key] = await ctx.db.db.select().from(apiKeys).where(eq(apiKeys.agentId, data.id));
      expect(key).toMatchObject({
        organizationId: org(),
        kind: 'agent',
        name: 'Support bot',
        prefix: data.keyPrefix,
        keyHash: sha256(data.apiKey),
        scope: { agentIds: [data.id] },
        createdBy: owner.user.id,
        revokedAt: null,
      });
      expect(await auditEvents(data.id)).toEqual(['agent.created']);

      const shown = await ctx.get(`${AGENTS}/${data.id}`, { token: owner.token });
      expect(shown.statusCode).toBe(200);
      expect(shown.json().data).not.toHaveProperty('apiKey');
      expect(shown.body).not.toContain(data.apiKey);
    });

    it('key authenticates GET /agents and lists only its own agent', async () => {
      const mine = await createAgent({ name: 'Mine' });
      await createAgent({ name: 'Someone else' });
      const res = await ctx.get(AGENTS, { apiKey: mine.apiKey });
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json();
      expect(body.success).toBe(true);
      expect(body.data).toEqual([
        {
          id: mine.id,
          name: 'Mine',
          description: null,
          keyPrefix: mine.keyPrefix,
          createdBy: owner.user.id,
          createdAt: mine.createdAt,
          updatedAt: mine.updatedAt,
        },
      ]);
      expect(body.pagination).toEqual({ page: 1, limit: 50, total: 1, totalPages: 1 });

      const own = await ctx.get(`${AGENTS}/${mine.id}`, { apiKey: mine.apiKey });
      expect(own.statusCode, own.body).toBe(200);
      expect(own.json().data.id).toBe(mine.id);
    });

    it('lists every agent of the organization for a user, newest first', async () => {
      const res = await ctx.get(AGENTS, { token: owner.token, query: { limit: '100' } });
      expect(res.statusCode).toBe(200);
      const ids = (res.json().data as Agent[]).map((a) => a.id);
      expect(ids.length).toBeGreaterThanOrEqual(3);
      expect(res.json().pagination.total).toBe(ids.length);
      expect(await ctx.get(AGENTS, { token: other.token }).then((r) => r.json().data)).toEqual([]);
    });

    it('returns 403 FORBIDDEN to a viewer', async () => {
      const viewer = await ctx.addMember(org(), 'viewer');
      expectErrorEnvelope(
        await ctx.post(AGENTS, { token: viewer.token, body: { name: 'x' } }),
        403,
        'FORBIDDEN',
      );
      const list = await ctx.get(AGENTS, { token: viewer.token });
      expect(list.statusCode).toBe(200);
    });

    it.each([
      ['a missing name', {}],
      ['a blank name', { name: '  ' }],
      ['a name over 200 characters', { name: 'n'.repeat(201) }],
      ['a description over 2000 characters', { name: 'x', description: 'd'.repeat(2001) }],
      ['an unknown field', { name: 'x', organizationId: 'a'.repeat(24) }],
    ])('returns 400 VALIDATION_ERROR for %s', async (_case, body) => {
      expectErrorEnvelope(await ctx.post(AGENTS, { token: owner.token, body }), 400, 'VALIDATION_ERROR');
    });

    it('accepts a 200-character name and stores the key under its first 120 characters', async () => {
      const name = 'n'.repeat(200);
      const agent = await createAgent({ name });
      expect(agent.name).toBe(name);
      const [key] = await ctx.db.db.select().from(apiKeys).where(eq(apiKeys.agentId, agent.id));
      expect(key!.name).toBe(name.slice(0, 120));
    });
  });

  describe('agent keys', () => {
    it('get 403 FORBIDDEN on POST, PATCH, DELETE, regenerate-key and /auth/me', async () => {
      const agent = await createAgent({ name: 'Restricted' });
      const apiKey = agent.apiKey;
      expectErrorEnvelope(await ctx.post(AGENTS, { apiKey, body: { name: 'x' } }), 403, 'FORBIDDEN');
      expectErrorEnvelope(
        await ctx.patch(`${AGENTS}/${agent.id}`, { apiKey, body: { name: 'x' } }),
        403,
        'FORBIDDEN',
      );
      expectErrorEnvelope(await del(`${AGENTS}/${agent.id}`, { apiKey }), 403, 'FORBIDDEN');
      expectErrorEnvelope(
        await ctx.post(`${AGENTS}/${agent.id}/regenerate-key`, { apiKey }),
        403,
        'FORBIDDEN',
      );
      expectErrorEnvelope(await ctx.get('/api/v1/auth/me', { apiKey }), 403, 'FORBIDDEN');
      const [row] = await ctx.db.db.select().from(agents).where(eq(agents.id, agent.id));
      expect(row!.name).toBe('Restricted');
    });

    it('get 404 NOT_FOUND for another agent of the same organization', async () => {
      const a = await createAgent({ name: 'A' });
      const b = await createAgent({ name: 'B' });
      expectErrorEnvelope(await ctx.get(`${AGENTS}/${b.id}`, { apiKey: a.apiKey }), 404, 'NOT_FOUND');
    });
  });

  describe('POST /agents/:id/regenerate-key', () => {
    it('invalidates the old key at once, keeps the scope and audits agent.key_regenerated', async () => {
      const agent = await createAgent({ name: 'Rotating' });
      // Used first, so that the key resolver has it cached when it is regenerated.
      expect((await ctx.get(AGENTS, { apiKey: agent.apiKey })).statusCode).toBe(200);
      const res = await ctx.post(`${AGENTS}/${agent.id}/regenerate-key`, { token: owner.token });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.headers['cache-control']).toBe('no-store');
      const { apiKey } = res.json().data as { apiKey: string };
      expect(res.json().data).toEqual({ apiKey: expect.stringMatching(AGENT_KEY_FORMAT) });
      expect(apiKey).not.toBe(agent.apiKey);

      expectErrorEnvelope(await ctx.get(AGENTS, { apiKey: agent.apiKey }), 401, 'UNAUTHORIZED');
      const fresh = await ctx.get(AGENTS, { apiKey });
      expect(fresh.statusCode, fresh.body).toBe(200);
      expect((fresh.json().data as Agent[]).map((a) => a.id)).toEqual([agent.id]);
      expect(fresh.json().data[0].keyPrefix).toBe(apiKey.slice(0, 'svc_agent_'.length + 12));

      const rows = await ctx.db.db.select().from(apiKeys).where(eq(apiKeys.agentId, agent.id));
      expect(rows).toHaveLength(2);
      const live = rows.filter((r) => r.revokedAt === null);
      expect(live).toHaveLength(1);
      expect(live[0]).toMatchObject({
        keyHash: sha256(apiKey),
        scope: { agentIds: [agent.id] },
        kind: 'agent',
      });
      expect(await auditEvents(agent.id)).toEqual(['agent.created', 'agent.key_regenerated']);
    });
  });

  describe('agent key cache', () => {
    it('drops a regenerated or deleted agent’s key from another replica’s cache (NOTIFY on PostgreSQL, in-process on PGlite)', async () => {
      const { handle, close } = await replicaHandle(ctx.db);
      // A day of TTL: only the announcement can make this replica forget a key.
      const replicaTx = new TransactionHost(handle);
      const replica = new AgentKeyResolver(new AgentKeysRepository(replicaTx), replicaTx, handle, {
        ttlMs: 86_400_000,
      });
      await replica.onModuleInit();
      try {
        const rotating = await createAgent({ name: 'Replica rotating' });
        const doomed = await createAgent({ name: 'Replica doomed' });
        expect(await replica.resolveKey(rotating.apiKey)).toMatchObject({
          credential: 'agentKey',
          organizationId: org(),
          agentId: rotating.id,
        });
        expect(await replica.resolveKey(doomed.apiKey)).toMatchObject({ agentId: doomed.id });
        expect(replica.cachedKeys).toBe(2);

        const res = await ctx.post(`${AGENTS}/${rotating.id}/regenerate-key`, { token: owner.token });
        expect(res.statusCode, res.body).toBe(200);
        await vi.waitFor(async () => expect(await replica.resolveKey(rotating.apiKey)).toBeNull(), {
          timeout: 5000,
          interval: 20,
        });
        expect(await replica.resolveKey(res.json().data.apiKey)).toMatchObject({ agentId: rotating.id });

        expect((await del(`${AGENTS}/${doomed.id}`, { token: owner.token })).statusCode).toBe(200);
        await vi.waitFor(async () => expect(await replica.resolveKey(doomed.apiKey)).toBeNull(), {
          timeout: 5000,
          interval: 20,
        });
      } finally {
        await replica.onModuleDestroy();
        await close();
      }
    });

    it('never keeps unknown or malformed keys', async () => {
      const resolver = ctx.app.get(AgentKeyResolver);
      const before = resolver.cachedKeys;
      const unknown = `svc_agent_${'A'.repeat(43)}`;
      for (let i = 0; i < 3; i++) {
        expectErrorEnvelope(await ctx.get(AGENTS, { apiKey: unknown }), 401, 'UNAUTHORIZED');
        expectErrorEnvelope(await ctx.get(AGENTS, { apiKey: 'svc_agent_short' }), 401, 'UNAUTHORIZED');
      }
      expect(resolver.cachedKeys).toBe(before);
    });
  });

  describe('DELETE /agents/:id', () => {
    it('deletes the agent, keeps its traces, revokes its key and audits agent.deleted', async () => {
      const agent = await createAgent({ name: 'Doomed' });
      const traceId = await insertTrace(agent.id, 'approved', 0.9);
      expect((await ctx.get(AGENTS, { apiKey: agent.apiKey })).statusCode).toBe(200);

      const res = await del(`${AGENTS}/${agent.id}`, { token: owner.token });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual({ success: true, data: { id: agent.id, deleted: true } });

      expectErrorEnvelope(await ctx.get(AGENTS, { apiKey: agent.apiKey }), 401, 'UNAUTHORIZED');
      expectErrorEnvelope(await ctx.get(`${AGENTS}/${agent.id}`, { token: owner.token }), 404, 'NOT_FOUND');
      const [trace] = await ctx.db.db.select().from(traces).where(eq(traces.id, traceId));
      expect(trace).toMatchObject({ id: traceId, agentId: agent.id, status: 'approved' });
      const [key] = await ctx.db.db.select().from(apiKeys).where(eq(apiKeys.agentId, agent.id));
      expect(key!.revokedAt).toEqual(ctx.clock.now());
      expect(await auditEvents(agent.id)).toEqual(['agent.created', 'agent.deleted']);
      expectErrorEnvelope(await del(`${AGENTS}/${agent.id}`, { token: owner.token }), 404, 'NOT_FOUND');
    });
  });

  describe('GET /agents/:id analytics', () => {
    it('counts by status, averages confidence and ignores other agents’ traces', async () => {
      const agent = await createAgent({ name: 'Measured' });
      const neighbour = await createAgent({ name: 'Neighbour' });
      const last = new Date(ctx.clock.now().getTime() + 60_000);
      await insertTrace(agent.id, 'approved', 0.9);
      await insertTrace(agent.id, 'approved', 0.8, { humanOverride: true });
      await insertTrace(agent.id, 'flagged', 0.5);
      await insertTrace(agent.id, 'blocked', 0.3);
      await insertTrace(agent.id, 'success', 0.95, { createdAt: last });
      await insertTrace(agent.id, 'approved', 0.1, { organizationId: other.organization.id });
      await insertTrace(neighbour.id, 'blocked', 0.05, { createdAt: new Date(last.getTime() + 1000) });

      const res = await ctx.get(`${AGENTS}/${agent.id}`, { token: owner.token });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data).toEqual({
        id: agent.id,
        name: 'Measured',
        description: null,
        keyPrefix: agent.keyPrefix,
        createdBy: owner.user.id,
        createdAt: agent.createdAt,
        updatedAt: agent.updatedAt,
        analytics: {
          totalTraces: 5,
          byStatus: { approved: 2, flagged: 1, blocked: 1, success: 1 },
          averageConfidence: 0.69,
          humanOverrideRate: 0.2,
          lastTraceAt: last.toISOString(),
        },
      });
    });

    it('reports zero counts and null averages for an agent without traces', async () => {
      const agent = await createAgent({ name: 'Quiet' });
      const res = await ctx.get(`${AGENTS}/${agent.id}`, { token: owner.token });
      expect(res.statusCode).toBe(200);
      expect(res.json().data.analytics).toEqual({
        totalTraces: 0,
        byStatus: { approved: 0, flagged: 0, blocked: 0, success: 0 },
        averageConfidence: null,
        humanOverrideRate: null,
        lastTraceAt: null,
      });
    });
  });

  describe('ownership', () => {
    it('lets a member edit their own agent and refuses another member’s with 403 FORBIDDEN', async () => {
      const alice = await ctx.addMember(org(), 'member');
      const bob = await ctx.addMember(org(), 'member');
      const mine = await createAgent({ name: 'Alice bot' }, alice.token);
      const theirs = await createAgent({ name: 'Bob bot' }, bob.token);
      expect(mine.createdBy).toBe(alice.userId);

      ctx.clock.advance(1000);
      const res = await ctx.patch(`${AGENTS}/${mine.id}`, {
        token: alice.token,
        body: { name: 'Alice bot 2', description: 'Renamed' },
      });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data).toMatchObject({
        id: mine.id,
        name: 'Alice bot 2',
        description: 'Renamed',
        keyPrefix: mine.keyPrefix,
        createdBy: alice.userId,
        createdAt: mine.createdAt,
        updatedAt: ctx.clock.now().toISOString(),
      });
      const [key] = await ctx.db.db.select().from(apiKeys).where(eq(apiKeys.agentId, mine.id));
      expect(key!.name).toBe('Alice bot 2');
      expect(await auditEvents(mine.id)).toEqual(['agent.created', 'agent.updated']);

      for (const attempt of [
        ctx.patch(`${AGENTS}/${theirs.id}`, { token: alice.token, body: { name: 'Hijacked' } }),
        del(`${AGENTS}/${theirs.id}`, { token: alice.token }),
        ctx.post(`${AGENTS}/${theirs.id}/regenerate-key`, { token: alice.token }),
      ]) {
        expectErrorEnvelope(await attempt, 403, 'FORBIDDEN');
      }
      const [row] = await ctx.db.db.select().from(agents).where(eq(agents.id, theirs.id));
      expect(row!.name).toBe('Bob bot');
      expect((await ctx.get(AGENTS, { apiKey: theirs.apiKey })).statusCode).toBe(200);
    });

    it('lets an admin edit and delete any member’s agent', async () => {
      const member = await ctx.addMember(org(), 'member');
      const admin = await ctx.addMember(org(), 'admin');
      const agent = await createAgent({ name: 'Member bot' }, member.token);
      const res = await ctx.patch(`${AGENTS}/${agent.id}`, {
        token: admin.token,
        body: { description: 'By admin' },
      });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data).toMatchObject({
        id: agent.id,
        description: 'By admin',
        createdBy: member.userId,
      });
      const removed = await del(`${AGENTS}/${agent.id}`, { token: admin.token });
      expect(removed.statusCode, removed.body).toBe(200);
      expect(removed.json().data).toEqual({ id: agent.id, deleted: true });
    });

    it('returns 403 FORBIDDEN to a viewer on PATCH', async () => {
      const agent = await createAgent({ name: 'Viewed' });
      const viewer = await ctx.addMember(org(), 'viewer');
      expectErrorEnvelope(
        await ctx.patch(`${AGENTS}/${agent.id}`, { token: viewer.token, body: { name: 'x' } }),
        403,
        'FORBIDDEN',
      );
    });
  });

  describe('tenancy and ids', () => {
    it('returns 404 NOT_FOUND for another organization’s agent on every route', async () => {
      const foreign = await createAgent({ name: 'Foreign' }, other.token);
      const url = `${AGENTS}/${foreign.id}`;
      expectErrorEnvelope(await ctx.get(url, { token: owner.token }), 404, 'NOT_FOUND');
      expectErrorEnvelope(
        await ctx.patch(url, { token: owner.token, body: { name: 'x' } }),
        404,
        'NOT_FOUND',
      );
      expectErrorEnvelope(await del(url, { token: owner.token }), 404, 'NOT_FOUND');
      expectErrorEnvelope(await ctx.post(`${url}/regenerate-key`, { token: owner.token }), 404, 'NOT_FOUND');
      const [row] = await ctx.db.db.select().from(agents).where(eq(agents.id, foreign.id));
      expect(row!.name).toBe('Foreign');
    });

    it('returns 404 NOT_FOUND for a malformed id', async () => {
      expectErrorEnvelope(await ctx.get(`${AGENTS}/not-an-id`, { token: owner.token }), 404, 'NOT_FOUND');
      expectErrorEnvelope(
        await ctx.patch(`${AGENTS}/${'A'.repeat(24)}`, { token: owner.token, body: { name: 'x' } }),
        404,
        'NOT_FOUND',
      );
    });
  });

  describe('workspace keys', () => {
    it('a key scoped to agent A lists only A and gets 404 for B', async () => {
      const a = await createAgent({ name: 'Scoped A' });
      const b = await createAgent({ name: 'Scoped B' });
      const created = await ctx.post('/api/v1/auth/keys', {
        token: owner.token,
        body: { name: 'Scoped', scope: { agentIds: [a.id] } },
      });
      expect(created.statusCode, created.body).toBe(201);
      const apiKey = created.json().data.key as string;

      const res = await ctx.get(AGENTS, { apiKey });
      expect(res.statusCode, res.body).toBe(200);
      expect((res.json().data as Agent[]).map((x) => x.id)).toEqual([a.id]);
      expect(res.json().pagination.total).toBe(1);
      const one = await ctx.get(`${AGENTS}/${a.id}`, { apiKey });
      expect(one.statusCode, one.body).toBe(200);
      expect(one.json().data).toMatchObject({ id: a.id, analytics: { totalTraces: 0 } });
      expectErrorEnvelope(await ctx.get(`${AGENTS}/${b.id}`, { apiKey }), 404, 'NOT_FOUND');
      expectErrorEnvelope(await ctx.post(AGENTS, { apiKey, body: { name: 'x' } }), 403, 'FORBIDDEN');
    });
  });
});
