import { describe, expect, it } from 'vitest';
import { alertsSuite, ALERTS, INTEGRATIONS, rule } from './support/alerts-suite.js';
import { expectErrorEnvelope } from './support/assertions.js';
import { auditEntriesOf } from './support/audit-entries.js';

/**
 * Alert rules as a resource: creating one (audited, in state ok), the bounds a rule must keep, null in an update, and
 * who may create, edit and delete. How rules are evaluated and notified: alerts-evaluation.
 */
describe('alert rules', () => {
  const s = alertsSuite();
  const { create, stateOf } = s;

  describe('rules', () => {
    it('creates a rule in state ok with its fields, audited, and lists and gets it', async () => {
      const { ctx, owner, other, viewer, agent, emailId, hookId } = s;
      const res = await create(
        rule({ name: '  Payments blocks ', agentId: agent.id, integrationIds: [emailId, hookId] }),
      );
      expect(res.statusCode, res.body).toBe(201);
      const data = res.json().data;
      expect(data).toMatchObject({
        name: 'Payments blocks',
        metric: 'block_rate',
        agentId: agent.id,
        comparison: 'gt',
        threshold: 0.3,
        windowMinutes: 60,
        integrationIds: [emailId, hookId],
        isActive: true,
        state: 'ok',
        lastTriggeredAt: null,
        lastEvaluatedAt: null,
        lastValue: null,
        createdBy: owner.user.id,
      });
      const list = await ctx.get(`${ALERTS}?state=ok`, { token: viewer.token });
      expect(list.json().data.map((a: { id: string }) => a.id)).toContain(data.id);
      expect((await ctx.get(ALERTS, { token: other.token })).json().pagination.total).toBe(0);
      expectErrorEnvelope(await ctx.get(`${ALERTS}/${data.id}`, { token: other.token }), 404, 'NOT_FOUND');
      const audit = await auditEntriesOf(ctx, owner.organization.id, 'alert.create');
      expect(audit.at(-1)).toMatchObject({ targetId: data.id });
      await ctx.delete(`${ALERTS}/${data.id}`, { token: owner.token });
    });

    it('refuses bad rules with 400 and stores nothing', async () => {
      const { ctx, owner, otherAgent, emailId } = s;
      const before = (await ctx.get(ALERTS, { token: owner.token })).json().pagination.total;
      const bad: Array<[Record<string, unknown>, string]> = [
        [rule({ metric: 'cpu' }), 'metric'],
        [rule({ comparison: 'eq' }), 'comparison'],
        [rule({ windowMinutes: 4 }), 'windowMinutes'],
        [rule({ windowMinutes: 10_081 }), 'windowMinutes'],
        [rule({ windowMinutes: 7.5 }), 'windowMinutes'],
        [rule({ threshold: 1.5 }), 'threshold'],
        [rule({ threshold: -1 }), 'threshold'],
        [rule({ threshold: '0.3' }), 'threshold'],
        [rule({ metric: 'trace_volume', threshold: 2e9 }), 'threshold'],
        [rule({ name: '' }), 'name'],
        [rule({ agentId: otherAgent.id }), 'agentId'],
        [rule({ integrationIds: ['0123456789abcdef01234567'] }), 'integrationIds'],
        [rule({ integrationIds: [emailId, emailId] }), 'integrationIds'],
        [rule({ integrationIds: Array.from({ length: 11 }, () => emailId) }), 'integrationIds'],
      ];
      for (const [body, field] of bad) {
        const res = await create(body);
        expectErrorEnvelope(res, 400, 'VALIDATION_ERROR');
        expect(JSON.stringify(res.json().error), JSON.stringify(body)).toContain(field);
      }
      // A count metric takes counts above 1.
      const volume = await create(rule({ metric: 'trace_volume', threshold: 500 }));
      expect(volume.statusCode).toBe(201);
      await ctx.delete(`${ALERTS}/${volume.json().data.id}`, { token: owner.token });
      expect((await ctx.get(ALERTS, { token: owner.token })).json().pagination.total).toBe(before);
    });

    it('refuses null for a field of an update with 400 and changes nothing', async () => {
      const { ctx, owner, emailId } = s;
      const created = (await create(rule({ name: 'Nulls' }))).json().data;
      for (const field of [
        'name',
        'metric',
        'comparison',
        'threshold',
        'windowMinutes',
        'integrationIds',
        'isActive',
      ]) {
        const res = await ctx.patch(`${ALERTS}/${created.id}`, {
          token: owner.token,
          body: { [field]: null },
        });
        expectErrorEnvelope(res, 400, 'VALIDATION_ERROR');
        expect(res.body).toContain(field);
      }
      const integrationNull = await ctx.patch(`${INTEGRATIONS}/${emailId}`, {
        token: owner.token,
        body: { name: null, config: null },
      });
      expectErrorEnvelope(integrationNull, 400, 'VALIDATION_ERROR');
      const after = await stateOf(created.id);
      expect(after).toEqual({ ...created, updatedAt: after.updatedAt });
      // agentId null means every agent.
      const cleared = await ctx.patch(`${ALERTS}/${created.id}`, {
        token: owner.token,
        body: { agentId: null },
      });
      expect(cleared.statusCode, cleared.body).toBe(200);
      await ctx.delete(`${ALERTS}/${created.id}`, { token: owner.token });
    });

    it('lets members edit only their own, viewers nothing, and only the owner delete', async () => {
      const { ctx, owner, other, admin, member, viewer } = s;
      const mine = (await create(rule({ name: 'Member rule' }), member.token)).json().data;
      const owners = (await create(rule({ name: 'Owner rule' }))).json().data;
      expect(mine.createdBy).toBe(member.userId);
      expectErrorEnvelope(await create(rule(), viewer.token), 403, 'FORBIDDEN');
      const edited = await ctx.patch(`${ALERTS}/${mine.id}`, {
        token: member.token,
        body: { threshold: 0.5 },
      });
      expect(edited.statusCode, edited.body).toBe(200);
      expect(edited.json().data.threshold).toBe(0.5);
      expectErrorEnvelope(
        await ctx.patch(`${ALERTS}/${owners.id}`, { token: member.token, body: { threshold: 0.5 } }),
        403,
        'FORBIDDEN',
      );
      expect(
        (await ctx.patch(`${ALERTS}/${mine.id}`, { token: admin.token, body: { name: 'By admin' } }))
          .statusCode,
      ).toBe(200);
      // Deletion: the owner only, even of a member's own rule.
      for (const token of [member.token, admin.token, viewer.token]) {
        expectErrorEnvelope(await ctx.delete(`${ALERTS}/${mine.id}`, { token }), 403, 'FORBIDDEN');
      }
      expect((await stateOf(mine.id)).name).toBe('By admin');
      expectErrorEnvelope(await ctx.delete(`${ALERTS}/${mine.id}`, { token: other.token }), 404, 'NOT_FOUND');
      const deleted = await ctx.delete(`${ALERTS}/${mine.id}`, { token: owner.token });
      expect(deleted.statusCode).toBe(200);
      expect(deleted.json().data).toEqual({ id: mine.id, deleted: true });
      expectErrorEnvelope(await ctx.get(`${ALERTS}/${mine.id}`, { token: owner.token }), 404, 'NOT_FOUND');
      const audit = await auditEntriesOf(ctx, owner.organization.id, 'alert.delete');
      expect(audit.at(-1)).toMatchObject({ targetId: mine.id });
      await ctx.delete(`${ALERTS}/${owners.id}`, { token: owner.token });
    });
  });
});
