import { describe, expect, it } from 'vitest';
import { JobScheduler } from '#platform';
import { replicaContext, TestContext } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';
import { DAY, SCHEDULE, scheduledReportsSuite, SEND_NOW, START } from './support/scheduled-reports-suite.js';

/**
 * When scheduled reports are sent: the scheduler's ticks (every period, never an inactive report, a failed send
 * retried, once with two instances), a worker with WORKERS=on beside an API with WORKERS=off, and send-now (a refused
 * send or no mail server: 502). Managing reports: scheduled-reports-manage; what a digest holds:
 * scheduled-reports-digest.
 */
describe('scheduled reports', () => {
  const s = scheduledReportsSuite();
  const { tick, create, rowOf, mailsOf, uniqueName } = s;

  describe('the scheduler', () => {
    it('sends a new report on its next tick, then every period; never an inactive one', async () => {
      const { ctx, owner } = s;
      const name = uniqueName('Daily ops');
      const report = (await create({ name, frequency: 'daily', recipients: ['ops@example.com'] })).json()
        .data;
      const paused = uniqueName('Paused digest');
      const inactive = (
        await create({ name: paused, frequency: 'daily', recipients: ['ops@example.com'], isActive: false })
      ).json().data;

      await tick();
      expect(await mailsOf(name)).toHaveLength(1);
      let row = await rowOf(report.id);
      expect(row.sentCount).toBe(1);
      expect(row.lastSentAt?.toISOString()).toBe(START);
      expect(row.nextSendAt.toISOString()).toBe(new Date(Date.parse(START) + DAY).toISOString());
      expect(row.claimedUntil).toBeNull();

      // Not due again until a day has passed.
      ctx.clock.advance(DAY - 1000);
      await tick();
      expect(await mailsOf(name)).toHaveLength(1);
      ctx.clock.advance(1000);
      await tick();
      expect(await mailsOf(name)).toHaveLength(2);
      row = await rowOf(report.id);
      expect(row.sentCount).toBe(2);
      expect(row.nextSendAt.toISOString()).toBe(new Date(Date.parse(START) + 2 * DAY).toISOString());

      // Three days late: one digest, and the next send is the first one still ahead.
      ctx.clock.advance(3 * DAY + 60_000);
      await tick();
      expect(await mailsOf(name)).toHaveLength(3);
      row = await rowOf(report.id);
      expect(row.nextSendAt.toISOString()).toBe(new Date(Date.parse(START) + 5 * DAY).toISOString());

      expect(await mailsOf(paused)).toHaveLength(0);
      expect((await rowOf(inactive.id)).sentCount).toBe(0);
      await ctx.delete(`${SCHEDULE}/${report.id}`, { token: owner.token });
      await ctx.delete(`${SCHEDULE}/${inactive.id}`, { token: owner.token });
    });

    it('leaves a report whose send failed unchanged, and sends it on the next tick', async () => {
      const { ctx, mail, owner } = s;
      const name = uniqueName('Retried');
      const report = (await create({ name, frequency: 'weekly', recipients: ['retry@example.com'] })).json()
        .data;
      mail.refuse = true;
      try {
        await tick();
      } finally {
        mail.refuse = false;
      }
      expect(await mailsOf(name)).toHaveLength(0);
      let row = await rowOf(report.id);
      expect(row).toMatchObject({ sentCount: 0, lastSentAt: null, claimedUntil: null });
      expect(row.nextSendAt.toISOString()).toBe(START);

      await tick();
      expect(await mailsOf(name)).toHaveLength(1);
      row = await rowOf(report.id);
      expect(row.sentCount).toBe(1);
      expect(row.nextSendAt.toISOString()).toBe(new Date(Date.parse(START) + 7 * DAY).toISOString());
      await ctx.delete(`${SCHEDULE}/${report.id}`, { token: owner.token });
    });

    it('sends each due report once when two instances tick together', async () => {
      const { ctx, owner } = s;
      const replica = await replicaContext(ctx, { config: { ...ctx.config } });
      try {
        const names = [uniqueName('Twin'), uniqueName('Twin'), uniqueName('Twin')];
        const ids: string[] = [];
        for (const name of names) {
          ids.push(
            (await create({ name, frequency: 'daily', recipients: ['twins@example.com'] })).json().data.id,
          );
        }
        await Promise.all([tick(), replica.app.get(JobScheduler).runNow('scheduled-reports'), tick()]);
        for (const name of names) expect(await mailsOf(name)).toHaveLength(1);
        for (const id of ids) expect((await rowOf(id)).sentCount).toBe(1);
        for (const id of ids) await ctx.delete(`${SCHEDULE}/${id}`, { token: owner.token });
      } finally {
        await replica.close();
      }
    });
  });

  describe('where the scheduler runs', () => {
    it('sends from a worker with WORKERS=on while the API runs with WORKERS=off', async () => {
      const { ctx, owner } = s;
      // The worker (apps/worker) is the same modules without a listener; here, a second instance on the same
      // database with background work on and a one-second interval. The API instance (workers: false) runs none.
      const worker = await replicaContext(ctx, {
        config: { ...ctx.config, workers: true, reportSchedulerIntervalMs: 1000 },
      });
      try {
        expect(ctx.app.get(JobScheduler).running).toBe(false);
        expect(worker.app.get(JobScheduler).running).toBe(true);
        const name = uniqueName('From the worker');
        const report = (await create({ name, frequency: 'daily', recipients: ['worker@example.com'] })).json()
          .data;
        const deadline = Date.now() + 10_000;
        while ((await mailsOf(name)).length === 0 && Date.now() < deadline) {
          await new Promise((r) => setTimeout(r, 100));
        }
        expect(await mailsOf(name)).toHaveLength(1);
        expect((await rowOf(report.id)).sentCount).toBe(1);
        await ctx.delete(`${SCHEDULE}/${report.id}`, { token: owner.token });
      } finally {
        await worker.close();
      }
    });
  });

  describe('send-now', () => {
    it('sends at once and leaves nextSendAt; a refused send answers 502 and changes nothing', async () => {
      const { ctx, mail, owner } = s;
      const name = uniqueName('On demand');
      const report = (
        await create({ name, frequency: 'monthly', recipients: ['now@example.com'], isActive: false })
      ).json().data;
      const sent = await ctx.post(`${SEND_NOW}/${report.id}`, { token: owner.token });
      expect(sent.statusCode, sent.body).toBe(200);
      expect(sent.json().data).toEqual({ sentCount: 1, lastSentAt: START, nextSendAt: START });
      expect(await mailsOf(name)).toHaveLength(1);

      ctx.clock.advance(60_000);
      mail.refuse = true;
      try {
        const failed = await ctx.post(`${SEND_NOW}/${report.id}`, { token: owner.token });
        expectErrorEnvelope(failed, 502, 'SEND_FAILED');
      } finally {
        mail.refuse = false;
      }
      const row = await rowOf(report.id);
      expect(row.sentCount).toBe(1);
      expect(row.lastSentAt?.toISOString()).toBe(START);
      expect(await mailsOf(name)).toHaveLength(1);
      expectErrorEnvelope(
        await ctx.post(`${SEND_NOW}/${report.id}`, {
          token: (await ctx.addMember(owner.organization.id, 'member')).token,
        }),
        403,
        'FORBIDDEN',
      );
      await ctx.delete(`${SCHEDULE}/${report.id}`, { token: owner.token });
    });

    it('answers 502 SEND_FAILED when no mail server is configured', async () => {
      const bare = await TestContext.create({ now: START, config: { smtpUrl: undefined, workers: false } });
      try {
        const boss = await bare.register({ organizationName: 'No SMTP' });
        await bare.setPlan(boss.organization.id, 'governance');
        const report = await bare.post(SCHEDULE, {
          token: boss.token,
          body: { name: 'R', frequency: 'daily', recipients: ['a@example.com'] },
        });
        const res = await bare.post(`${SEND_NOW}/${report.json().data.id}`, { token: boss.token });
        expectErrorEnvelope(res, 502, 'SEND_FAILED');
      } finally {
        await bare.close();
      }
    });
  });
});
