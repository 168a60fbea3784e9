import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { POLICY_TEMPLATES } from '../libs/governance/src/policies/engine/index.js';
import { PoliciesRepository } from '../libs/governance/src/policies/policies.repository.js';
import { CachedPolicySet } from '../libs/governance/src/policies/policy-cache.js';
import { PolicySet } from '../libs/governance/src/policies/policy-set.js';
import { TransactionHost } from '#platform';
import { type Registered, TestContext } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';
import { auditEntries } from './support/audit-entries.js';
import { EMAIL_BLOCK, fakeId, POLICIES, policyHelpers, type PolicyBody } from './support/policies-suite.js';
import { replicaHandle } from './support/database.js';

describe('policies', () => {
  let ctx: TestContext;
  let owner: Registered;
  let other: Registered;
  let admin: { userId: string; token: string };
  let member: { userId: string; token: string };
  let viewer: { userId: string; token: string };
  beforeAll(async () => {
    ctx = await TestContext.create();
    owner = await ctx.register({ organizationName: 'Policy Owners' });
    other = await ctx.register({ organizationName: 'Other Org' });
    admin = await ctx.addMember(owner.organization.id, 'admin');
    member = await ctx.addMember(owner.organization.id, 'member');
    viewer = await ctx.addMember(owner.organization.id, 'viewer');
    await ctx.newAgent(owner.organization.id, 'First');
    await ctx.newAgent(owner.organization.id, 'Second');
  });
  afterAll(async () => ctx?.close());

  const org = () => owner.organization.id;

  const { create, expectRefused } = policyHelpers(
    () => ctx,
    () => owner,
  );

  describe('read', () => {
    it('lists active policies in evaluation order; includeInactive=true lists all', async () => {
      const ctx2Owner = await ctx.register({ organizationName: 'Listing Org' });
      const mk = (body: Record<string, unknown>) => create({ ...EMAIL_BLOCK, ...body }, ctx2Owner.token);
      const late = await mk({ name: 'late', priority: 300 });
      const early = await mk({ name: 'early', priority: 1 });
      const off = await mk({ name: 'off', isActive: false });

      const active = await ctx.get(POLICIES, { token: ctx2Owner.token });
      expect(active.statusCode).toBe(200);
      expect(active.json().data.map((p: PolicyBody) => p.id)).toEqual([early.id, late.id]);
      expect(active.json().pagination).toEqual({ page: 1, limit: 100, total: 2, totalPages: 1 });

      const all = await ctx.get(POLICIES, { token: ctx2Owner.token, query: { includeInactive: 'true' } });
      expect(all.statusCode).toBe(200);
      expect(all.json().data.map((p: PolicyBody) => p.id)).toEqual([early.id, off.id, late.id]);

      const explicitFalse = await ctx.get(POLICIES, {
        token: ctx2Owner.token,
        query: { includeInactive: 'false' },
      });
      expect(explicitFalse.json().data).toHaveLength(2);

      const paged = await ctx.get(POLICIES, { token: ctx2Owner.token, query: { limit: '1', page: '2' } });
      expect(paged.json().data.map((p: PolicyBody) => p.id)).toEqual([late.id]);
      expect(paged.json().pagination).toEqual({ page: 2, limit: 1, total: 2, totalPages: 2 });
    });

    it('returns 400 for an includeInactive value other than true or false', async () => {
      const res = await ctx.get(POLICIES, { token: owner.token, query: { includeInactive: 'yes' } });
      const error = expectErrorEnvelope(res, 400, 'VALIDATION_ERROR');
      expect(error.details).toEqual([{ field: 'includeInactive', message: expect.any(String) }]);
    });

    it('serves the templates, not a policy named "templates"', async () => {
      const res = await ctx.get(`${POLICIES}/templates`, { token: viewer.token });
      expect(res.statusCode, res.body).toBe(200);
      const data = res.json().data as Record<string, unknown>[];
      expect(data).toHaveLength(POLICY_TEMPLATES.length);
      expect(data.length).toBeGreaterThanOrEqual(7);
      for (const t of data)
        expect(Object.keys(t).sort()).toEqual(['conditions', 'description', 'id', 'name', 'outcome']);
      expect(data.map((t) => t.id)).toEqual(POLICY_TEMPLATES.map((t) => t.id));
    });

    it('gets one policy; any role may read', async () => {
      const created = await create({ ...EMAIL_BLOCK, name: 'Readable' });
      for (const token of [owner.token, admin.token, member.token, viewer.token]) {
        const res = await ctx.get(`${POLICIES}/${created.id}`, { token });
        expect(res.statusCode, res.body).toBe(200);
        expect(res.json().data).toEqual(created);
      }
      const list = await ctx.get(POLICIES, { token: viewer.token });
      expect(list.statusCode).toBe(200);
      expect(list.json().data.map((p: PolicyBody) => p.id)).toContain(created.id);
    });

    it('returns 404 for another organization’s policy, an unknown id and a malformed id', async () => {
      const created = await create({ ...EMAIL_BLOCK, name: 'Private' });
      expectErrorEnvelope(
        await ctx.get(`${POLICIES}/${created.id}`, { token: other.token }),
        404,
        'NOT_FOUND',
      );
      expectErrorEnvelope(
        await ctx.get(`${POLICIES}/${fakeId(9)}`, { token: owner.token }),
        404,
        'NOT_FOUND',
      );
      expectErrorEnvelope(await ctx.get(`${POLICIES}/nope`, { token: owner.token }), 404, 'NOT_FOUND');
      const list = await ctx.get(POLICIES, { token: other.token, query: { includeInactive: 'true' } });
      expect(list.json().data.map((p: PolicyBody) => p.id)).not.toContain(created.id);
    });

    it('returns 401 without a token', async () => {
      expectErrorEnvelope(await ctx.get(POLICIES), 401, 'UNAUTHORIZED');
    });
  });

  describe('update', () => {
    it('changes only the fields sent, bumps updatedAt and audits the changed keys', async () => {
      const created = await create({ ...EMAIL_BLOCK, name: 'To patch' });
      ctx.clock.advance(1000);
      const res = await ctx.patch(`${POLICIES}/${created.id}`, {
        token: admin.token,
        body: { name: 'Patched', priority: 7, outcome: 'block', description: null },
      });
      expect(res.statusCode, res.body).toBe(200);
      const data = res.json().data as PolicyBody;
      expect(data).toMatchObject({
        id: created.id,
        name: 'Patched',
        priority: 7,
        outcome: 'block',
        description: null,
        conditions: created.conditions,
        createdAt: created.createdAt,
      });
      expect(Date.parse(data.updatedAt) - Date.parse(created.updatedAt)).toBe(1000);
      const entry = (await auditEntries(ctx, owner.token, 'policy.updated')).find(
        (e) => e.targetId === created.id,
      );
      expect(entry?.metadata).toEqual({ name: 'Patched', changed: ['name', 'description', 'priority'] });
      expect(entry?.actor).toMatchObject({ type: 'user', id: admin.userId });
    });

    it('writes nothing when nothing changes', async () => {
      const created = await create({ ...EMAIL_BLOCK, name: 'Unchanged' });
      const res = await ctx.patch(`${POLICIES}/${created.id}`, {
        token: owner.token,
        body: { name: 'Unchanged', outcome: 'block' },
      });
      expect(res.statusCode).toBe(200);
      expect(res.json().data).toEqual(created);
      expect(
        (await auditEntries(ctx, owner.token, 'policy.updated')).some((e) => e.targetId === created.id),
      ).toBe(false);
    });

    it('revalidates the merged policy: a new operator must fit the stored value', async () => {
      const created = await create({
        ...EMAIL_BLOCK,
        conditions: [{ field: 'confidence', operator: 'lt', value: 0.5 }],
      });
      // The new conditions alone are checked as well as the whole.
      await expectRefused(
        { conditions: [{ field: 'confidence', operator: 'lt', value: 'low' }] },
        'conditions[0].value',
        /finite number/,
        'patch',
        created.id,
      );
      await expectRefused(
        { conditions: [{ field: 'outputDecision.text', operator: 'resembles', value: 'x' }] },
        'conditions[0].operator',
        /./,
        'patch',
        created.id,
      );
      await expectRefused({ conditions: [] }, 'conditions', /at least one/, 'patch', created.id);
      await expectRefused({ match: 'some' }, 'match', /all, any/, 'patch', created.id);
      await expectRefused(
        { templateId: 'email-address' },
        'templateId',
        /should not exist/,
        'patch',
        created.id,
      );
      const unchanged = await ctx.get(`${POLICIES}/${created.id}`, { token: owner.token });
      expect(unchanged.json().data.conditions).toEqual([{ field: 'confidence', operator: 'lt', value: 0.5 }]);
    });

    it('returns 404 for another organization’s policy', async () => {
      const created = await create();
      const res = await ctx.patch(`${POLICIES}/${created.id}`, {
        token: other.token,
        body: { name: 'mine' },
      });
      expectErrorEnvelope(res, 404, 'NOT_FOUND');
      expectErrorEnvelope(
        await ctx.patch(`${POLICIES}/xyz`, { token: owner.token, body: { name: 'x' } }),
        404,
        'NOT_FOUND',
      );
    });
  });

  describe('delete', () => {
    it('deletes, answers {id, deleted: true}, then 404, and audits policy.deleted', async () => {
      const created = await create({ ...EMAIL_BLOCK, name: 'Doomed' });
      const res = await ctx.request('DELETE', `${POLICIES}/${created.id}`, { token: admin.token });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual({ success: true, data: { id: created.id, deleted: true } });
      expectErrorEnvelope(
        await ctx.get(`${POLICIES}/${created.id}`, { token: owner.token }),
        404,
        'NOT_FOUND',
      );
      expectErrorEnvelope(
        await ctx.request('DELETE', `${POLICIES}/${created.id}`, { token: owner.token }),
        404,
        'NOT_FOUND',
      );
      const entry = (await auditEntries(ctx, owner.token, 'policy.deleted')).find(
        (e) => e.targetId === created.id,
      );
      expect(entry).toMatchObject({ targetType: 'policy', metadata: { name: 'Doomed', outcome: 'block' } });
    });

    it('returns 404 for another organization’s policy and keeps it', async () => {
      const created = await create();
      expectErrorEnvelope(
        await ctx.request('DELETE', `${POLICIES}/${created.id}`, { token: other.token }),
        404,
        'NOT_FOUND',
      );
      expect((await ctx.get(`${POLICIES}/${created.id}`, { token: owner.token })).statusCode).toBe(200);
    });
  });

  describe('compiled policy set', () => {
    const ids = async (policySet: PolicySet, organizationId: string) =>
      (await policySet.forOrganization(organizationId)).map((p) => p.id).sort();

    it('reflects a create, a patch, a deactivation and a delete as soon as the response is sent', async () => {
      const fresh = await ctx.register({ organizationName: 'Cache Org' });
      const organizationId = fresh.organization.id;
      const policySet = ctx.app.get(PolicySet);
      expect(await policySet.forOrganization(organizationId)).toEqual([]);

      const created = await create(EMAIL_BLOCK, fresh.token);
      expect(await ids(policySet, organizationId)).toEqual([created.id]);

      const patched = await ctx.patch(`${POLICIES}/${created.id}`, {
        token: fresh.token,
        body: { outcome: 'flag', priority: 3 },
      });
      expect(patched.statusCode).toBe(200);
      const [compiled] = await policySet.forOrganization(organizationId);
      expect(compiled).toMatchObject({ id: created.id, outcome: 'flag', priority: 3 });

      await ctx.patch(`${POLICIES}/${created.id}`, { token: fresh.token, body: { isActive: false } });
      expect(await policySet.forOrganization(organizationId)).toEqual([]);

      await ctx.patch(`${POLICIES}/${created.id}`, { token: fresh.token, body: { isActive: true } });
      expect(await ids(policySet, organizationId)).toEqual([created.id]);

      await ctx.request('DELETE', `${POLICIES}/${created.id}`, { token: fresh.token });
      expect(await policySet.forOrganization(organizationId)).toEqual([]);
    });

    it('keeps the set after a refused change and never mixes organizations', async () => {
      const policySet = ctx.app.get(PolicySet);
      const mine = await ids(policySet, org());
      await ctx.post(POLICIES, { token: owner.token, body: { ...EMAIL_BLOCK, conditions: [] } });
      expect(await ids(policySet, org())).toEqual(mine);
      expect(await policySet.forOrganization(other.organization.id)).toEqual([]);
    });

    it('invalidates another replica’s cache on the same database (NOTIFY on PostgreSQL, in-process on PGlite)', async () => {
      const fresh = await ctx.register({ organizationName: 'Replica Org' });
      const organizationId = fresh.organization.id;
      const { handle, close } = await replicaHandle(ctx.db);
      const tx = new TransactionHost(handle);
      // A day of TTL: only an invalidation can make this replica reload.
      const replica = new CachedPolicySet(new PoliciesRepository(tx, handle), tx, handle, {
        ttlMs: 86_400_000,
      });
      await replica.start();
      try {
        expect(await replica.forOrganization(organizationId)).toEqual([]);
        expect(replica.size).toBe(1);

        const created = await create(EMAIL_BLOCK, fresh.token);
        await vi.waitFor(async () => expect(await ids(replica, organizationId)).toEqual([created.id]), {
          timeout: 5000,
          interval: 20,
        });

        await ctx.patch(`${POLICIES}/${created.id}`, { token: fresh.token, body: { isActive: false } });
        await vi.waitFor(async () => expect(await replica.forOrganization(organizationId)).toEqual([]), {
          timeout: 5000,
          interval: 20,
        });

        // A change in another organization leaves this one cached.
        await replica.forOrganization(organizationId);
        await create(EMAIL_BLOCK, other.token);
        const spy = vi.spyOn(PoliciesRepository.prototype, 'listActiveForEvaluation');
        await new Promise((r) => setTimeout(r, 200));
        await replica.forOrganization(organizationId);
        expect(spy).not.toHaveBeenCalled();
        spy.mockRestore();
      } finally {
        await replica.stop();
        await close();
      }
    });
  });
});
