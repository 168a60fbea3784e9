import { describe, expect, it } from 'vitest';
import { expectErrorEnvelope } from './support/assertions.js';
import { auditEntriesOf } from './support/audit-entries.js';
import { SCHEDULE, scheduledReportsSuite, SEND_NOW, START } from './support/scheduled-reports-suite.js';

/**
 * Scheduled reports as a resource: creating one with its defaults (audited), the bounds of its fields, listing,
 * pausing, resuming, editing and deleting, and who may do it on which plan. Sending: scheduled-reports-sending; what
 * a digest holds: scheduled-reports-digest.
 */
describe('scheduled reports', () => {
  const s = scheduledReportsSuite();
  const { create, uniqueName } = s;

  describe('CRUD and its bounds', () => {
    it('creates a report with the defaults, de-duplicated recipients and the creator', async () => {
      const { ctx, owner } = s;
      const res = await create({
        name: '  Weekly board digest  ',
        frequency: 'weekly',
        recipients: ['Board@Example.com', 'board@example.com', ' cfo@example.com '],
      });
      expect(res.statusCode, res.body).toBe(201);
      const data = res.json().data;
      expect(data).toMatchObject({
        organizationId: owner.organization.id,
        workspaceId: null,
        name: 'Weekly board digest',
        frequency: 'weekly',
        recipients: ['board@example.com', 'cfo@example.com'],
        includeMetrics: true,
        includeTopAgents: true,
        includeAlerts: true,
        includeLowConf: false,
        isActive: true,
        lastSentAt: null,
        nextSendAt: START,
        sentCount: 0,
        createdBy: owner.user.id,
        createdByEmail: owner.user.email,
      });
      const audit = await auditEntriesOf(ctx, owner.organization.id, 'report.schedule.create');
      expect(audit.map((a) => a.targetId)).toContain(data.id);
      await ctx.delete(`${SCHEDULE}/${data.id}`, { token: owner.token });
    });

    it('refuses what the bounds do not allow, and creates nothing', async () => {
      const { ctx, owner } = s;
      const before = await ctx.get(SCHEDULE, { token: owner.token, query: { includeInactive: 'true' } });
      const twentyOne = Array.from({ length: 21 }, (_, i) => `r${i}@example.com`);
      const bad: Array<[Record<string, unknown>, string]> = [
        [{ name: 'x'.repeat(121), frequency: 'daily', recipients: ['a@example.com'] }, 'name'],
        [{ name: '   ', frequency: 'daily', recipients: ['a@example.com'] }, 'name'],
        [{ frequency: 'daily', recipients: ['a@example.com'] }, 'name'],
        [{ name: 'R', frequency: 'hourly', recipients: ['a@example.com'] }, 'frequency'],
        [{ name: 'R', recipients: ['a@example.com'] }, 'frequency'],
        [{ name: 'R', frequency: 'daily', recipients: [] }, 'recipients'],
        [{ name: 'R', frequency: 'daily' }, 'recipients'],
        [{ name: 'R', frequency: 'daily', recipients: twentyOne }, 'recipients'],
        [{ name: 'R', frequency: 'daily', recipients: ['not-an-address'] }, 'recipients'],
        [{ name: 'R', frequency: 'daily', recipients: 'a@example.com' }, 'recipients'],
        [{ name: 'R', frequency: 'daily', recipients: [42] }, 'recipients'],
        [
          { name: 'R', frequency: 'daily', recipients: ['a@example.com'], includeMetrics: 'yes' },
          'includeMetrics',
        ],
        [{ name: 'R', frequency: 'daily', recipients: ['a@example.com'], extra: 1 }, 'extra'],
      ];
      for (const [body, field] of bad) {
        const res = await create(body);
        const error = expectErrorEnvelope(res, 400, 'VALIDATION_ERROR');
        expect(JSON.stringify(error.details), JSON.stringify(body)).toContain(field);
      }
      const after = await ctx.get(SCHEDULE, { token: owner.token, query: { includeInactive: 'true' } });
      expect(after.json().pagination.total).toBe(before.json().pagination.total);
    });

    it('accepts 21 addresses that are 20 once de-duplicated, and a name of 120 characters', async () => {
      const { ctx, owner } = s;
      const twenty = Array.from({ length: 20 }, (_, i) => `r${i}@example.com`);
      const res = await create({
        name: 'n'.repeat(120),
        frequency: 'monthly',
        recipients: [...twenty, 'R0@EXAMPLE.COM'],
        isActive: false,
      });
      expect(res.statusCode, res.body).toBe(201);
      expect(res.json().data.recipients).toHaveLength(20);
      await ctx.delete(`${SCHEDULE}/${res.json().data.id}`, { token: owner.token });
    });

    it('lists active reports, all with includeInactive, and pauses, resumes, edits and deletes one', async () => {
      const { ctx, owner } = s;
      const active = (
        await create({ name: uniqueName('Active'), frequency: 'daily', recipients: ['a@example.com'] })
      ).json().data;
      const paused = (
        await create({
          name: uniqueName('Paused'),
          frequency: 'daily',
          recipients: ['a@example.com'],
          isActive: false,
        })
      ).json().data;
      const ids = async (query: Record<string, string> = {}) =>
        (await ctx.get(SCHEDULE, { token: owner.token, query })).json().data.map((r: { id: string }) => r.id);
      expect(await ids()).toContain(active.id);
      expect(await ids()).not.toContain(paused.id);
      expect(await ids({ includeInactive: 'true' })).toEqual(expect.arrayContaining([active.id, paused.id]));
      expectErrorEnvelope(
        await ctx.get(SCHEDULE, { token: owner.token, query: { includeInactive: 'maybe' } }),
        400,
        'VALIDATION_ERROR',
      );

      const resumed = await ctx.patch(`${SCHEDULE}/${paused.id}`, {
        token: owner.token,
        body: { isActive: true, nextSendAt: '2026-06-01T09:00:00.000Z', includeLowConf: true },
      });
      expect(resumed.statusCode, resumed.body).toBe(200);
      expect(resumed.json().data).toMatchObject({
        isActive: true,
        nextSendAt: '2026-06-01T09:00:00.000Z',
        includeLowConf: true,
      });
      expect(await ids()).toContain(paused.id);
      expectErrorEnvelope(
        await ctx.patch(`${SCHEDULE}/${paused.id}`, { token: owner.token, body: { recipients: [] } }),
        400,
        'VALIDATION_ERROR',
      );
      const got = await ctx.get(`${SCHEDULE}/${paused.id}`, { token: owner.token });
      expect(got.json().data.recipients).toEqual(['a@example.com']);

      for (const id of [active.id, paused.id]) {
        const del = await ctx.delete(`${SCHEDULE}/${id}`, { token: owner.token });
        expect(del.statusCode).toBe(200);
        expect(del.json().data).toEqual({ id, deleted: true });
        expectErrorEnvelope(await ctx.get(`${SCHEDULE}/${id}`, { token: owner.token }), 404, 'NOT_FOUND');
        expectErrorEnvelope(await ctx.delete(`${SCHEDULE}/${id}`, { token: owner.token }), 404, 'NOT_FOUND');
      }
      const audit = await auditEntriesOf(ctx, owner.organization.id, 'report.schedule.delete');
      expect(audit.map((a) => a.targetId)).toEqual(expect.arrayContaining([active.id, paused.id]));
    });

    it('is for owners and admins of an organization on a plan with scheduledReports, and its own reports only', async () => {
      const { ctx, owner, other } = s;
      const member = await ctx.addMember(owner.organization.id, 'member');
      const viewer = await ctx.addMember(owner.organization.id, 'viewer');
      const admin = await ctx.addMember(owner.organization.id, 'admin');
      const body = { name: uniqueName('Roles'), frequency: 'daily', recipients: ['a@example.com'] };
      expectErrorEnvelope(await create(body, member.token), 403, 'FORBIDDEN');
      expectErrorEnvelope(await create(body, viewer.token), 403, 'FORBIDDEN');
      expectErrorEnvelope(await ctx.get(SCHEDULE, { token: viewer.token }), 403, 'FORBIDDEN');
      const made = await create(body, admin.token);
      expect(made.statusCode).toBe(201);
      const id = made.json().data.id;
      // Another organization sees nothing of it.
      expectErrorEnvelope(await ctx.get(`${SCHEDULE}/${id}`, { token: other.token }), 404, 'NOT_FOUND');
      expectErrorEnvelope(
        await ctx.patch(`${SCHEDULE}/${id}`, { token: other.token, body: { isActive: false } }),
        404,
        'NOT_FOUND',
      );
      expectErrorEnvelope(await ctx.post(`${SEND_NOW}/${id}`, { token: other.token }), 404, 'NOT_FOUND');
      expectErrorEnvelope(await ctx.delete(`${SCHEDULE}/${id}`, { token: other.token }), 404, 'NOT_FOUND');
      expectErrorEnvelope(await ctx.get(`${SCHEDULE}/not-an-id`, { token: owner.token }), 404, 'NOT_FOUND');
      // The sandbox plan has no scheduled reports.
      const sandbox = await ctx.register({ organizationName: 'Sandbox' });
      expectErrorEnvelope(await create(body, sandbox.token), 403, 'UPGRADE_REQUIRED');
      expectErrorEnvelope(await ctx.get(SCHEDULE, { token: sandbox.token }), 403, 'UPGRADE_REQUIRED');
      await ctx.delete(`${SCHEDULE}/${id}`, { token: owner.token });
    });
  });
});
