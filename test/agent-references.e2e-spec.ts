import { eq } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '#platform';
import { agents } from '../libs/governance/src/agents/agent.schema.js';
import { type Registered, TestContext } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';

const AGENTS = '/api/v1/agents';
const POLICIES = '/api/v1/policies';
const KEYS = '/api/v1/auth/keys';
const AUDIT = '/api/v1/audit';

const POLICY = {
  name: 'No e-mail in answers',
  outcome: 'block',
  conditions: [{ field: 'outputDecision.text', operator: 'contains', value: '@' }],
};

/** One operation that stores agent ids: how to send a list, where the answer carries it, and what it stores. */
interface Operation {
  name: string;
  field: 'agentIds' | 'scope.agentIds';
  okStatus: number;
  send(ids: string[]): Promise<LightMyRequestResponse>;
  storedIds(data: Record<string, unknown>): unknown;
  /** What a refused call must leave as it was (a count for creates, the record for updates). */
  stored(): Promise<unknown>;
}

describe('agent ids in policies and workspace key scopes', () => {
  let ctx: TestContext;
  let owner: Registered;
  let other: Registered;
  let own: [string, string];
  let deleted: string;
  let foreign: string;
  let unknown: string;
  let policyId: string;
  let keyId: string;

  async function createAgent(name: string, token: string): Promise<string> {
    const res = await ctx.post(AGENTS, { token, body: { name } });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().data.id as string;
  }

  async function total(url: string, query: Record<string, string> = {}): Promise<number> {
    const res = await ctx.get(url, { token: owner.token, query: { ...query, limit: '1' } });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().pagination.total as number;
  }

  async function storedKey(): Promise<unknown> {
    const res = await ctx.get(KEYS, { token: owner.token, query: { limit: '100' } });
    expect(res.statusCode, res.body).toBe(200);
    return (res.json().data as { id: string }[]).find((key) => key.id === keyId);
  }

  async function storedPolicy(): Promise<unknown> {
    const res = await ctx.get(`${POLICIES}/${policyId}`, { token: owner.token });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data;
  }

  beforeAll(async () => {
    ctx = await TestContext.create();
    owner = await ctx.register({ organizationName: 'Referencing Org' });
    other = await ctx.register({ organizationName: 'Foreign Org' });
    own = [await createAgent('First', owner.token), await createAgent('Second', owner.token)];
    deleted = await createAgent('Gone', owner.token);
    const removed = await ctx.request('DELETE', `${AGENTS}/${deleted}`, { token: owner.token });
    expect(removed.statusCode, removed.body).toBe(200);
    foreign = await createAgent('Theirs', other.token);
    unknown = newId();

    const policy = await ctx.post(POLICIES, { token: owner.token, body: POLICY });
    expect(policy.statusCode, policy.body).toBe(201);
    policyId = policy.json().data.id;
    const key = await ctx.post(KEYS, { token: owner.token, body: { name: 'Scoped' } });
    expect(key.statusCode, key.body).toBe(201);
    keyId = key.json().data.id;
  });
  afterAll(async () => ctx?.close());

  const operations: Operation[] = [
    {
      name: 'POST /policies',
      field: 'agentIds',
      okStatus: 201,
      send: (ids) => ctx.post(POLICIES, { token: owner.token, body: { ...POLICY, agentIds: ids } }),
      storedIds: (data) => data.agentIds,
      stored: () => total(POLICIES, { includeInactive: 'true' }),
    },
    {
      name: 'PATCH /policies/:id',
      field: 'agentIds',
      okStatus: 200,
      send: (ids) => ctx.patch(`${POLICIES}/${policyId}`, { token: owner.token, body: { agentIds: ids } }),
      storedIds: (data) => data.agentIds,
      stored: storedPolicy,
    },
    {
      name: 'POST /auth/keys',
      field: 'scope.agentIds',
      okStatus: 201,
      send: (ids) => ctx.post(KEYS, { token: owner.token, body: { name: 'CI', scope: { agentIds: ids } } }),
      storedIds: (data) => (data.scope as { agentIds: unknown }).agentIds,
      stored: () => total(KEYS),
    },
    {
      name: 'PATCH /auth/keys/:id',
      field: 'scope.agentIds',
      okStatus: 200,
      send: (ids) =>
        ctx.patch(`${KEYS}/${keyId}`, { token: owner.token, body: { scope: { agentIds: ids } } }),
      storedIds: (data) => (data.scope as { agentIds: unknown }).agentIds,
      stored: storedKey,
    },
  ];

  describe.each(operations)('$name', (op) => {
    /**
     * Sends the ids and expects 400 VALIDATION_ERROR naming exactly the given positions, with nothing stored and
     * no audit entry written. Returns the raw body.
     */
    async function expectRefused(ids: string[], positions: number[]): Promise<string> {
      const [storedBefore, auditBefore] = [await op.stored(), await total(AUDIT)];
      const res = await op.send(ids);
      const error = expectErrorEnvelope(res, 400, 'VALIDATION_ERROR');
      expect(error.details).toEqual(
        positions.map((index) => ({
          field: `${op.field}.${index}`,
          message: `${op.field}.${index} is not an agent of this organization`,
        })),
      );
      expect(await op.stored()).toEqual(storedBefore);
      expect(await total(AUDIT)).toBe(auditBefore);
      return res.body;
    }

    it('accepts agents of the caller’s organization', async () => {
      const res = await op.send([own[0], own[1]]);
      expect(res.statusCode, res.body).toBe(op.okStatus);
      expect(op.storedIds(res.json().data)).toEqual([own[0], own[1]]);
    });

    it('refuses another organization’s agent with 400 naming the field, storing nothing', async () => {
      await expectRefused([foreign], [0]);
    });

    it('refuses an id that exists nowhere with a body identical to the one for another organization’s agent', async () => {
      const foreignBody = await expectRefused([foreign], [0]);
      const unknownBody = await expectRefused([unknown], [0]);
      expect(unknownBody).toBe(foreignBody);
      expect(unknownBody).not.toContain(unknown);
      expect(foreignBody).not.toContain(foreign);
    });

    it('refuses a deleted agent of the caller’s organization', async () => {
      await expectRefused([deleted], [0]);
    });

    it('names the position in the request of each bad id, duplicates of good ids counted', async () => {
      await expectRefused([own[0], own[1], own[0], foreign], [3]);
      await expectRefused([own[0], unknown, own[1], deleted, foreign], [1, 3, 4]);
      const [mixedForeign, mixedUnknown] = [
        await expectRefused([own[1], foreign], [1]),
        await expectRefused([own[1], unknown], [1]),
      ];
      expect(mixedUnknown).toBe(mixedForeign);
    });

    it('still accepts the organization’s own agents after refusals', async () => {
      const res = await op.send([own[1]]);
      expect(res.statusCode, res.body).toBe(op.okStatus);
      expect(op.storedIds(res.json().data)).toEqual([own[1]]);
    });
  });

  describe('ids already stored', () => {
    it('are not checked again by a PATCH that does not send them (a policy naming an agent deleted since)', async () => {
      const agent = await createAgent('Short-lived', owner.token);
      const created = await ctx.post(POLICIES, {
        token: owner.token,
        body: { ...POLICY, agentIds: [agent] },
      });
      expect(created.statusCode, created.body).toBe(201);
      const key = await ctx.post(KEYS, {
        token: owner.token,
        body: { name: 'Old', scope: { agentIds: [agent] } },
      });
      expect(key.statusCode, key.body).toBe(201);
      // DELETE /agents/:id removes the id from both lists (agent-deletion-references.e2e-spec.ts); an id can still
      // dangle in rows stored before it did so, or when a check races the deletion: the row is removed directly here.
      await ctx.db.db.delete(agents).where(eq(agents.id, agent));

      const policyUrl = `${POLICIES}/${created.json().data.id}`;
      const renamed = await ctx.patch(policyUrl, { token: owner.token, body: { name: 'Renamed' } });
      expect(renamed.statusCode, renamed.body).toBe(200);
      expect(renamed.json().data).toMatchObject({ name: 'Renamed', agentIds: [agent] });
      const keyUrl = `${KEYS}/${key.json().data.id}`;
      const readOnly = await ctx.patch(keyUrl, { token: owner.token, body: { scope: { readOnly: true } } });
      expect(readOnly.statusCode, readOnly.body).toBe(200);
      expect(readOnly.json().data.scope).toEqual({ agentIds: [agent], readOnly: true });

      // Sending the list again checks every id in it, including the one the record already holds.
      const resent = await ctx.patch(policyUrl, {
        token: owner.token,
        body: { agentIds: [own[0], agent] },
      });
      const error = expectErrorEnvelope(resent, 400, 'VALIDATION_ERROR');
      expect(error.details).toEqual([
        { field: 'agentIds.1', message: 'agentIds.1 is not an agent of this organization' },
      ]);
      const keyResent = await ctx.patch(keyUrl, {
        token: owner.token,
        body: { scope: { agentIds: [agent] } },
      });
      expect(expectErrorEnvelope(keyResent, 400, 'VALIDATION_ERROR').details).toEqual([
        { field: 'scope.agentIds.0', message: 'scope.agentIds.0 is not an agent of this organization' },
      ]);
    });
  });
});
