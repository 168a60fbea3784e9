import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditEntries } from '../libs/platform/src/audit/audit.schema.js';
import { policies } from '../libs/governance/src/policies/policy.schema.js';
import { apiKeys } from '../libs/identity/src/api-keys/api-key.schema.js';
import { type Registered, TestContext } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';
import { KEYS } from './support/api-keys-suite.js';
import { auditEntriesOf } from './support/audit-entries.js';
import { TRACES, traceBody } from './support/traces-suite.js';

const AGENTS = '/api/v1/agents';
const POLICIES = '/api/v1/policies';

const blockWhenPromptHas = (value: string) => ({
  outcome: 'block',
  conditions: [{ field: 'inputContext.prompt', operator: 'contains', value }],
});

interface Policy {
  id: string;
  agentIds: string[];
  isActive: boolean;
  updatedAt: string;
}

interface Key {
  id: string;
  key: string;
  prefix: string;
  scope: { agentIds: string[] | null; readOnly: boolean };
}

/**
 * Deleting an agent removes its id from the agentIds of the organization's policies and the scopes of its workspace
 * keys, in the deleting transaction, each changed record audited; so that a list read back and sent again is accepted.
 */
describe('DELETE /agents/:id and the lists that name the agent', () => {
  let ctx: TestContext;
  let owner: Registered;
  let other: Registered;

  beforeAll(async () => {
    ctx = await TestContext.create();
    owner = await ctx.register({ organizationName: 'Deleting' });
    other = await ctx.register({ organizationName: 'Bystander' });
  });
  afterAll(async () => ctx?.close());

  const createAgent = async (name: string, token = owner.token): Promise<{ id: string; apiKey: string }> => {
    const res = await ctx.post(AGENTS, { token, body: { name } });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().data;
  };
  const createPolicy = async (
    name: string,
    agentIds: string[],
    token = owner.token,
    word = 'refund',
  ): Promise<Policy> => {
    const res = await ctx.post(POLICIES, { token, body: { ...blockWhenPromptHas(word), name, agentIds } });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().data;
  };
  const createKey = async (name: string, scope: object, token = owner.token): Promise<Key> => {
    const res = await ctx.post(KEYS, { token, body: { name, scope } });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().data;
  };
  const readPolicy = async (id: string, token = owner.token): Promise<Policy> => {
    const res = await ctx.get(`${POLICIES}/${id}`, { token });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data;
  };
  const listKeys = async (token = owner.token): Promise<Key[]> => {
    const res = await ctx.get(KEYS, { token, query: { limit: '100' } });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data;
  };
  const auditOf = (organizationId: string, eventType: string, targetId: string) =>
    auditEntriesOf(ctx, organizationId, eventType, targetId);
  const deleteAgent = (id: string, token = owner.token) =>
    ctx.request('DELETE', `${AGENTS}/${id}`, { token });

  it('removes the id from policies and keys in one go, audits each, and the lists read back are accepted', async () => {
    const doomed = await createAgent('Doomed');
    const kept = await createAgent('Kept');
    const shared = await createPolicy('Shared', [doomed.id, kept.id]);
    const only = await createPolicy('Only the doomed one', [doomed.id]);
    const unrelated = await createPolicy('Unrelated', [kept.id]);
    const everyAgent = await createPolicy('Every agent', [], owner.token, 'zzyzx');
    const sharedKey = await createKey('Shared', { agentIds: [kept.id, doomed.id], readOnly: true });
    const onlyKey = await createKey('Only', { agentIds: [doomed.id] });
    const unrelatedKey = await createKey('Unrelated', { agentIds: [kept.id] });
    ctx.clock.advance(60_000);

    const res = await deleteAgent(doomed.id);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toEqual({ id: doomed.id, deleted: true });

    // A policy keeps its other agents; one left naming no agent is deactivated, as an empty list means every agent.
    expect(await readPolicy(shared.id)).toMatchObject({ agentIds: [kept.id], isActive: true });
    expect(await readPolicy(only.id)).toMatchObject({ agentIds: [], isActive: false });
    expect(await readPolicy(unrelated.id)).toEqual(unrelated);
    expect(await readPolicy(everyAgent.id)).toEqual(everyAgent);
    // Its deactivation keeps it from blocking the organization's other agents.
    const trace = await ctx.post(TRACES, {
      apiKey: kept.apiKey,
      body: traceBody({}, { prompt: 'Please refund order 7' }),
    });
    expect(trace.statusCode, trace.body).toBe(403);
    expect(trace.json().data.policies.map((p: { policyId: string }) => p.policyId)).toEqual([
      shared.id,
      unrelated.id,
    ]);

    // A key keeps its other agents; one scoped to the deleted agent alone is revoked rather than widened to all.
    const keys = await listKeys();
    expect(keys.find((k) => k.id === sharedKey.id)!.scope).toEqual({ agentIds: [kept.id], readOnly: true });
    expect(keys.find((k) => k.id === unrelatedKey.id)!.scope).toEqual(unrelatedKey.scope);
    expect(keys.map((k) => k.id)).not.toContain(onlyKey.id);
    expectErrorEnvelope(await ctx.get(AGENTS, { apiKey: onlyKey.key }), 401, 'UNAUTHORIZED');
    const scoped = await ctx.get(AGENTS, { apiKey: sharedKey.key });
    expect(scoped.statusCode, scoped.body).toBe(200);
    expect(scoped.json().data.map((a: { id: string }) => a.id)).toEqual([kept.id]);

    // What a client read, sent back as it was.
    for (const policy of [shared, only]) {
      const read = await readPolicy(policy.id);
      const back = await ctx.patch(`${POLICIES}/${policy.id}`, {
        token: owner.token,
        body: { agentIds: read.agentIds },
      });
      expect(back.statusCode, back.body).toBe(200);
      expect(back.json().data).toMatchObject({ agentIds: read.agentIds, isActive: read.isActive });
    }
    const readKey = (await listKeys()).find((k) => k.id === sharedKey.id)!;
    const keyBack = await ctx.patch(`${KEYS}/${sharedKey.id}`, {
      token: owner.token,
      body: { name: 'Shared, renamed', scope: { agentIds: readKey.scope.agentIds } },
    });
    expect(keyBack.statusCode, keyBack.body).toBe(200);
    expect(keyBack.json().data.scope).toEqual({ agentIds: [kept.id], readOnly: true });

    // One entry per changed record, by the caller, saying why; none for the records left alone.
    const org = owner.organization.id;
    const actor = { type: 'user', id: owner.user.id, email: owner.user.email };
    const [deleted] = await auditOf(org, 'agent.deleted', doomed.id);
    expect(deleted!.metadata).toMatchObject({ name: 'Doomed' });
    expect((deleted!.metadata as { detachedFrom: unknown[] }).detachedFrom).toEqual(
      expect.arrayContaining([
        { type: 'policy', id: shared.id },
        { type: 'policy', id: only.id },
        { type: 'api_key', id: sharedKey.id },
        { type: 'api_key', id: onlyKey.id },
      ]),
    );
    expect((deleted!.metadata as { detachedFrom: unknown[] }).detachedFrom).toHaveLength(4);
    const reason = { reason: 'agent_deleted', agentId: doomed.id };
    const byDeletion = async (eventType: string, id: string) =>
      (await auditOf(org, eventType, id)).filter((e) => (e.metadata as { reason?: string }).reason);
    const [sharedEntry] = await byDeletion('policy.updated', shared.id);
    expect(sharedEntry).toMatchObject({
      actor,
      metadata: {
        ...reason,
        name: 'Shared',
        changed: ['agentIds'],
        changes: { agentIds: { from: [doomed.id, kept.id], to: [kept.id] } },
      },
    });
    expect(sharedEntry!.sequence).toBeGreaterThan(deleted!.sequence);
    const [onlyEntry] = await byDeletion('policy.updated', only.id);
    expect(onlyEntry).toMatchObject({
      actor,
      metadata: {
        ...reason,
        changed: ['agentIds', 'isActive'],
        changes: { agentIds: { from: [doomed.id], to: [] }, isActive: { from: true, to: false } },
      },
    });
    const [keyEntry] = await byDeletion('auth.key_updated', sharedKey.id);
    expect(keyEntry).toMatchObject({
      actor,
      metadata: {
        ...reason,
        prefix: sharedKey.prefix,
        changes: {
          scope: {
            from: { agentIds: [kept.id, doomed.id], readOnly: true },
            to: { agentIds: [kept.id], readOnly: true },
          },
        },
      },
    });
    expect(await byDeletion('auth.key_revoked', onlyKey.id)).toMatchObject([{ actor, metadata: reason }]);
    for (const [eventType, id] of [
      ['policy.updated', unrelated.id],
      ['policy.updated', everyAgent.id],
      ['auth.key_updated', unrelatedKey.id],
    ] as const) {
      expect(await auditOf(org, eventType, id)).toEqual([]);
    }
  });

  it('touches no other organization’s lists, not even one that names the deleted id', async () => {
    const doomed = await createAgent('Doomed too');
    const theirAgent = await createAgent('Theirs', other.token);
    const theirPolicy = await createPolicy('Theirs', [theirAgent.id], other.token);
    const theirKey = await createKey('Theirs', { agentIds: [theirAgent.id] }, other.token);
    // The API refuses another organization's agent; only a row written directly names it.
    await ctx.db.db
      .update(policies)
      .set({ agentIds: [theirAgent.id, doomed.id] })
      .where(eq(policies.id, theirPolicy.id));
    await ctx.db.db
      .update(apiKeys)
      .set({ scope: { agentIds: [doomed.id], readOnly: false } })
      .where(eq(apiKeys.id, theirKey.id));
    const auditBefore = await ctx.db.db
      .select()
      .from(auditEntries)
      .where(eq(auditEntries.organizationId, other.organization.id));

    expect((await deleteAgent(doomed.id)).statusCode).toBe(200);

    expect(await readPolicy(theirPolicy.id, other.token)).toMatchObject({
      agentIds: [theirAgent.id, doomed.id],
      isActive: true,
      updatedAt: theirPolicy.updatedAt,
    });
    const [key] = (await listKeys(other.token)).filter((k) => k.id === theirKey.id);
    expect(key!.scope).toEqual({ agentIds: [doomed.id], readOnly: false });
    const auditAfter = await ctx.db.db
      .select()
      .from(auditEntries)
      .where(eq(auditEntries.organizationId, other.organization.id));
    expect(auditAfter).toEqual(auditBefore);
  });

  it('changes no list when the deletion is refused', async () => {
    const member = await ctx.addMember(owner.organization.id, 'member');
    const agent = await createAgent('Owner’s');
    const policy = await createPolicy('Named', [agent.id]);
    const key = await createKey('Named', { agentIds: [agent.id] });
    // Members may delete only the agents they created.
    expectErrorEnvelope(await deleteAgent(agent.id, member.token), 403, 'FORBIDDEN');
    expect(await readPolicy(policy.id)).toEqual(policy);
    expect((await listKeys()).find((k) => k.id === key.id)!.scope).toEqual(key.scope);
    expect(await auditOf(owner.organization.id, 'policy.updated', policy.id)).toEqual([]);
  });
});
