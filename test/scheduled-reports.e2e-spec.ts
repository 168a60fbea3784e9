import { eq } from 'drizzle-orm';
import { type ParsedMail, simpleParser } from 'mailparser';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { JobScheduler } from '#platform';
import { scheduledReports } from '../libs/compliance/src/reports/scheduled-report.schema.js';
import { type Registered, replicaContext, TestContext } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';
import type { TestAgent } from './support/builders.js';
import { auditEntriesOf } from './support/compliance-suite.js';
import { MailCatcher } from './support/mail-catcher.js';
import { TRACES, traceBody } from './support/traces-suite.js';

const SCHEDULE = '/api/v1/reports/schedule';
const SEND_NOW = '/api/v1/reports/send-now';
const START = '2026-05-04T08:00:00.000Z';
const DAY = 86_400_000;
const APP_URL = 'http://app.gov.test';

async function parsed(raw: string): Promise<ParsedMail> {
  return simpleParser(raw);
}

describe('scheduled reports', () => {
  let ctx: TestContext;
  let mail: MailCatcher;
  let owner: Registered;
  let other: Registered;
  let agent: TestAgent;
  let quiet: TestAgent;
  let lowTraceId: string;

  const scheduler = () => ctx.app.get(JobScheduler);
  const tick = () => scheduler().runNow('scheduled-reports');
  const create = (body: Record<string, unknown>, token = owner.token) => ctx.post(SCHEDULE, { token, body });
  const rowOf = async (id: string) =>
    (await ctx.db.db.select().from(scheduledReports).where(eq(scheduledReports.id, id)))[0]!;
  /** Messages whose Subject names the report. */
  const mailsOf = async (name: string) => {
    const all = await Promise.all(mail.messages.map((m) => parsed(m.raw)));
    return all.filter((m) => m.subject?.startsWith(`${name}:`));
  };
  let counter = 0;
  const uniqueName = (prefix: string) => `${prefix} ${++counter}`;

  beforeAll(async () => {
    mail = await MailCatcher.start();
    ctx = await TestContext.create({ now: START, config: { smtpUrl: mail.url, workers: false } });
    owner = await ctx.register({ organizationName: 'Digest Org' });
    await ctx.setPlan(owner.organization.id, 'governance');
    other = await ctx.register({ organizationName: 'Other Digest Org' });
    await ctx.setPlan(other.organization.id, 'governance');
    agent = await ctx.newAgent(owner.organization.id, 'Loan <advisor>');
    quiet = await ctx.newAgent(owner.organization.id, 'Quiet agent');
    await ctx.newPolicy(owner.organization.id, {
      name: 'No card numbers',
      outcome: 'block',
      conditions: [{ field: 'inputContext.prompt', operator: 'contains', value: 'card number' }],
    });
    await ctx.newPolicy(owner.organization.id, {
      name: 'Low confidence',
      outcome: 'flag',
      conditions: [{ field: 'confidence', operator: 'lt', value: 0.5 }],
    });
    // A day of traces before the first digest: 4 for the advisor (2 approved, 1 flagged at 0.3, 1 blocked),
    // 1 for the quiet agent.
    ctx.clock.set(new Date(Date.parse(START) - DAY / 2));
    const send = async (key: string, body: Record<string, unknown>) => {
      const res = await ctx.post(TRACES, { apiKey: key, body });
      expect([201, 202, 403], res.body).toContain(res.statusCode);
      return res.json().data.id as string;
    };
    await send(agent.key, traceBody({ confidence: 0.9 }));
    await send(agent.key, traceBody({ confidence: 0.8 }));
    lowTraceId = await send(agent.key, traceBody({ confidence: 0.3 }));
    await send(agent.key, traceBody({ confidence: 0.7 }, { prompt: 'my card number is 4111' }));
    await send(quiet.key, traceBody({ confidence: 0.95 }));
    const incident = await ctx.post('/api/v1/incidents', {
      token: owner.token,
      body: {
        title: 'Unfair refusal',
        category: 'other',
        awareAt: new Date(Date.parse(START) - DAY).toISOString(),
      },
    });
    expect(incident.statusCode).toBe(201);
    ctx.clock.set(new Date(START));
  });
  // Tests move the clock; each starts at START.
  beforeEach(() => ctx.clock.set(new Date(START)));
  afterAll(async () => {
    await ctx?.close();
    await mail?.stop();
  });

  describe('CRUD and its bounds', () => {
    it('creates a report with the defaults, de-duplicated recipients and the creator', async () => {
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

  describe('the scheduler', () => {
    it('sends a new report on its next tick, then every period; never an inactive one', async () => {
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

  describe('the digest', () => {
    const sections = {
      includeMetrics: 'METRICS',
      includeTopAgents: 'TOP AGENTS',
      includeAlerts: 'ALERTS',
      includeLowConf: 'LOW-CONFIDENCE TRACES',
    } as const;
    const htmlHeadings = {
      includeMetrics: '>Metrics</h2>',
      includeTopAgents: '>Top agents</h2>',
      includeAlerts: '>Alerts</h2>',
      includeLowConf: '>Low-confidence traces</h2>',
    } as const;

    it('has HTML and text parts with the figures of the period since the last send', async () => {
      const name = uniqueName('Full digest');
      const report = (
        await create({
          name,
          frequency: 'daily',
          recipients: ['full@example.com', 'second@example.com'],
          includeLowConf: true,
        })
      ).json().data;
      const sent = await ctx.post(`${SEND_NOW}/${report.id}`, { token: owner.token });
      expect(sent.statusCode).toBe(200);
      const [message] = await mailsOf(name);
      expect(message).toBeDefined();
      const to = (Array.isArray(message!.to) ? message!.to : [message!.to]).flatMap((a) =>
        a!.value.map((v) => v.address),
      );
      expect(to).toEqual(['full@example.com', 'second@example.com']);
      expect(message!.subject).toBe(`${name}: Digest Org governance digest`);
      const text = message!.text!;
      const html = message!.html as string;
      expect(html).toBeTruthy();
      // Metrics: the day before: 5 traces.
      expect(text).toContain('Traces: 5');
      expect(text).toMatch(/approved: 3, average confidence 0\.883/);
      expect(text).toMatch(/flagged: 1, average confidence 0\.300/);
      expect(text).toMatch(/blocked: 1, average confidence 0\.700/);
      expect(text).toContain('Review backlog: 1 pending, 0 escalated');
      // Top agents, by volume, with rates; the name is escaped in HTML.
      expect(text).toContain('Loan <advisor>: 4 traces, flag rate 25.0 %, block rate 25.0 %');
      expect(text).toContain('Quiet agent: 1 traces, flag rate 0.0 %, block rate 0.0 %');
      expect(text.indexOf('Loan <advisor>')).toBeLessThan(text.indexOf('Quiet agent'));
      expect(html).toContain('Loan &lt;advisor&gt;');
      expect(html).not.toContain('Loan <advisor>');
      // Alerts.
      expect(text).toContain('Blocked traces: 1');
      expect(text).toContain('Open incidents: 1, overdue: 0');
      expect(text).toContain('Audit chain: valid');
      // Low-confidence traces, linked to the dashboard.
      expect(text).toContain(`0.300 Loan <advisor> (flagged): ${APP_URL}/traces/${lowTraceId}`);
      expect(html).toContain(`href="${APP_URL}/traces/${lowTraceId}"`);
      expect(text).not.toContain('Other Digest Org');
      await ctx.delete(`${SCHEDULE}/${report.id}`, { token: owner.token });
    });

    it('switches each section on and off with its include flag', async () => {
      const flags = Object.keys(sections) as Array<keyof typeof sections>;
      for (const on of flags) {
        const name = uniqueName(`Only ${on}`);
        const body = Object.fromEntries(flags.map((f) => [f, f === on]));
        const report = (
          await create({ name, frequency: 'weekly', recipients: ['flags@example.com'], ...body })
        ).json().data;
        expect((await ctx.post(`${SEND_NOW}/${report.id}`, { token: owner.token })).statusCode).toBe(200);
        const [message] = await mailsOf(name);
        for (const f of flags) {
          expect(message!.text!.includes(sections[f]), `${on}: ${f} in text`).toBe(f === on);
          expect((message!.html as string).includes(htmlHeadings[f]), `${on}: ${f} in HTML`).toBe(f === on);
        }
        await ctx.delete(`${SCHEDULE}/${report.id}`, { token: owner.token });
      }
    });

    it('covers only the period since the last send', async () => {
      const name = uniqueName('Since last');
      const report = (
        await create({ name, frequency: 'daily', recipients: ['since@example.com'], includeTopAgents: false })
      ).json().data;
      await tick();
      ctx.clock.advance(DAY);
      await ctx.post(TRACES, { apiKey: quiet.key, body: traceBody({ confidence: 0.99 }) });
      ctx.clock.advance(60_000);
      await tick();
      const messages = await mailsOf(name);
      expect(messages).toHaveLength(2);
      expect(messages[0]!.text).toContain('Traces: 5');
      expect(messages[1]!.text).toContain('Traces: 1');
      await ctx.delete(`${SCHEDULE}/${report.id}`, { token: owner.token });
    });
  });
});
