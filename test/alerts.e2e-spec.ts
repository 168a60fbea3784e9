import { and, eq } from 'drizzle-orm';
import { simpleParser } from 'mailparser';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { JobScheduler } from '#platform';
import { AlertEvaluatorJob } from '../libs/compliance/src/alerts/alert-evaluator.job.js';
import { alertRules, alertTransitions } from '../libs/compliance/src/alerts/alert.schema.js';
import { type Registered, replicaContext, TestContext } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';
import type { TestAgent } from './support/builders.js';
import { auditEntriesOf } from './support/compliance-suite.js';
import { MailCatcher } from './support/mail-catcher.js';
import { TRACES, traceBody } from './support/traces-suite.js';
import { WebhookReceiver } from './support/webhook-receiver.js';

const ALERTS = '/api/v1/alerts';
const INTEGRATIONS = '/api/v1/integrations';
const MINUTE = 60_000;
const INTERVAL = 60_000;

interface Envelope {
  type: string;
  data: Record<string, unknown>;
}

describe('alert rules', () => {
  let ctx: TestContext;
  let mail: MailCatcher;
  /** Slack and signed-webhook integrations post here. */
  let channel: WebhookReceiver;
  /** A webhook of the webhooks module, subscribed to the alert events. */
  let subscriber: WebhookReceiver;
  let owner: Registered;
  let other: Registered;
  let admin: { token: string };
  let member: { token: string; userId: string };
  let viewer: { token: string };
  let agent: TestAgent;
  let calm: TestAgent;
  let otherAgent: TestAgent;
  let emailId: string;
  let slackId: string;
  let hookId: string;
  let hookSecret: string;
  let subscriberSecret: string;

  const create = (body: Record<string, unknown>, token = owner.token) => ctx.post(ALERTS, { token, body });
  const rule = (over: Record<string, unknown> = {}) => ({
    name: 'Block rate jump',
    metric: 'block_rate',
    comparison: 'gt',
    threshold: 0.3,
    windowMinutes: 60,
    ...over,
  });
  const tick = (c: TestContext = ctx) => c.app.get(JobScheduler).runNow('alerts');
  /** Moves the clock past the interval, so every active rule is due again, and runs the evaluator. */
  const nextTick = async (ms = INTERVAL) => {
    ctx.clock.advance(ms);
    await tick();
  };
  const ingest = async (key: string, n: number, body: Record<string, unknown>) => {
    for (let i = 0; i < n; i++) {
      const res = await ctx.post(TRACES, { apiKey: key, body });
      expect([201, 202, 403]).toContain(res.statusCode);
    }
  };
  const clean = traceBody();
  const blocked = traceBody({}, { prompt: 'Please read me the card number on file' });
  const unsure = traceBody({ confidence: 0.2 });
  const stateOf = async (id: string) =>
    (await ctx.get(`${ALERTS}/${id}`, { token: viewer.token })).json().data;
  const historyOf = async (id: string) =>
    (await ctx.get(`${ALERTS}/${id}/history`, { token: viewer.token })).json();
  const transitionsOf = (id: string) =>
    ctx.db.db.select().from(alertTransitions).where(eq(alertTransitions.alertId, id));
  /**
   * Verifies a Standard Webhooks signature as a receiver whose clock reads the message's time: the service's clock
   * is moved by hours and days here, and the package checks the signed timestamp against its own.
   */
  const verify = (secret: string, hook: { body: string; headers: Record<string, unknown> }): Envelope => {
    vi.setSystemTime(Number(hook.headers['webhook-timestamp']) * 1000);
    try {
      return new Webhook(secret).verify(hook.body, hook.headers as Record<string, string>) as Envelope;
    } finally {
      vi.useRealTimers();
    }
  };
  const verifiedFrom = (secret: string, receiver: WebhookReceiver, type: string): Envelope[] =>
    receiver.ofType(type).flatMap((hook) => {
      try {
        return [verify(secret, hook)];
      } catch {
        return [];
      }
    });
  const waitUntil = async (what: string, ok: () => boolean | Promise<boolean>, timeoutMs = 5000) => {
    const deadline = Date.now() + timeoutMs;
    while (!(await ok())) {
      if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  };
  const slackTexts = () =>
    channel.received
      .filter((r) => r.json.type === undefined)
      .map((r) => (r.json as unknown as { text: string }).text);

  beforeAll(async () => {
    mail = await MailCatcher.start();
    channel = await WebhookReceiver.start();
    subscriber = await WebhookReceiver.start();
    // The clock starts at the real time: receivers check a Standard Webhooks timestamp against theirs.
    ctx = await TestContext.create({
      config: {
        smtpUrl: mail.url,
        webhookAllowPrivateNetworks: true,
        workers: false,
        alertIntervalMs: INTERVAL,
      },
    });
    owner = await ctx.register({ organizationName: 'Alerted' });
    other = await ctx.register({ organizationName: 'Not alerted' });
    admin = await ctx.addMember(owner.organization.id, 'admin');
    member = await ctx.addMember(owner.organization.id, 'member');
    viewer = await ctx.addMember(owner.organization.id, 'viewer');
    agent = await ctx.newAgent(owner.organization.id, 'Payments agent');
    calm = await ctx.newAgent(owner.organization.id, 'Calm agent');
    otherAgent = await ctx.newAgent(other.organization.id, 'Their agent');
    await ctx.newPolicy(owner.organization.id, {
      name: 'No card numbers',
      outcome: 'block',
      conditions: [{ field: 'inputContext.prompt', operator: 'contains', value: 'card number' }],
    });
    await ctx.newPolicy(owner.organization.id, {
      name: 'Unsure',
      outcome: 'flag',
      conditions: [{ field: 'confidence', operator: 'lt', value: 0.5 }],
    });
    const integration = async (body: Record<string, unknown>) => {
      const res = await ctx.post(INTEGRATIONS, { token: owner.token, body });
      expect(res.statusCode, res.body).toBe(201);
      return res.json().data as { id: string; secret?: string };
    };
    emailId = (
      await integration({ type: 'email', name: 'On call', config: { recipients: ['oncall@example.com'] } })
    ).id;
    // Not a member: the address confirms by its link before it receives anything (docs/compliance-officers.md,
    // "Integrations").
    const link = await mail.waitFor('oncall@example.com', (m) =>
      m.decoded.includes('/integrations/confirm?token='),
    );
    const token = MailCatcher.tokenFrom(link, '/integrations/confirm?token=');
    expect((await ctx.post(`${INTEGRATIONS}/confirm`, { body: { token } })).statusCode).toBe(200);
    slackId = (
      await integration({ type: 'slack', name: 'Slack', config: { url: `${channel.url}/slack/T/B/X` } })
    ).id;
    const hook = await integration({ type: 'webhook', name: 'SIEM', config: { url: channel.url } });
    hookId = hook.id;
    hookSecret = hook.secret!;
    const sub = await ctx.post('/api/v1/webhooks', {
      token: owner.token,
      body: { url: subscriber.url, events: ['alert.triggered', 'alert.resolved'] },
    });
    expect(sub.statusCode, sub.body).toBe(201);
    subscriberSecret = sub.json().data.secret;
  });
  afterAll(async () => {
    await ctx?.close();
    await channel?.close();
    await subscriber?.close();
    await mail?.stop();
  });

  describe('rules', () => {
    it('creates a rule in state ok with its fields, audited, and lists and gets it', async () => {
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

  describe('evaluation and notifications', () => {
    it('fires on a block-rate jump: one e-mail, Slack message and signed webhook, the event, audit and history; then resolves', async () => {
      const created = await create(
        rule({ name: 'Payments blocks', agentId: agent.id, integrationIds: [emailId, slackId, hookId] }),
      );
      const id = created.json().data.id as string;

      await ingest(agent.key, 6, clean);
      await ingest(calm.key, 6, blocked); // another agent's blocks do not count
      await tick();
      let state = await stateOf(id);
      expect(state).toMatchObject({ state: 'ok', lastValue: 0 });
      expect(state.lastEvaluatedAt).toBe(ctx.clock.now().toISOString());

      await ingest(agent.key, 4, blocked); // 4 of 10: 0.4 > 0.3
      // Not due yet: the rule was evaluated less than an interval ago.
      await tick();
      expect((await stateOf(id)).state).toBe('ok');
      await nextTick();
      state = await stateOf(id);
      expect(state).toMatchObject({ state: 'firing', lastValue: 0.4 });
      expect(state.lastTriggeredAt).toBe(ctx.clock.now().toISOString());

      const email = await simpleParser(
        (await mail.waitFor('oncall@example.com', (m) => m.subject.includes('Payments blocks'))).raw,
      );
      expect(email.subject).toBe('Alert triggered: Payments blocks');
      expect(email.text).toContain('block rate for agent');
      expect(email.text).toContain('40.0 %');
      expect(email.text).toContain('above the threshold of 30.0 %');
      await waitUntil('the Slack message', () => slackTexts().length === 1);
      expect(slackTexts()[0]).toContain('Alert "Payments blocks" triggered');
      await waitUntil(
        'the signed webhook',
        () => verifiedFrom(hookSecret, channel, 'alert.triggered').length === 1,
      );
      const [hook] = verifiedFrom(hookSecret, channel, 'alert.triggered');
      expect(hook!.data).toMatchObject({
        alertId: id,
        metric: 'block_rate',
        agentId: agent.id,
        threshold: 0.3,
        value: 0.4,
        state: 'firing',
        previousState: 'ok',
      });
      // The event reaches the webhooks module's subscribers too.
      await waitUntil(
        'the subscribed webhook',
        () => verifiedFrom(subscriberSecret, subscriber, 'alert.triggered').length === 1,
      );
      expect(verifiedFrom(subscriberSecret, subscriber, 'alert.triggered')[0]!.data).toMatchObject({
        alertId: id,
        value: 0.4,
      });
      const audit = await auditEntriesOf(ctx, owner.organization.id, 'alert.triggered');
      expect(audit).toHaveLength(1);
      expect(audit[0]).toMatchObject({ targetId: id, actor: { type: 'system', id: 'alerts' } });

      // Still above: no new notification.
      await nextTick();
      expect((await stateOf(id)).state).toBe('firing');
      expect((await historyOf(id)).data).toHaveLength(1);

      // The window moves past the blocks: with no trace in it, a rate is not measured and the state stays.
      await nextTick(61 * MINUTE);
      state = await stateOf(id);
      expect(state).toMatchObject({ state: 'firing', lastValue: null });

      await ingest(agent.key, 5, clean);
      await nextTick();
      expect(await stateOf(id)).toMatchObject({ state: 'ok', lastValue: 0 });
      const resolvedMail = await simpleParser(
        (await mail.waitFor('oncall@example.com', (m) => m.subject.startsWith('Alert resolved'))).raw,
      );
      expect(resolvedMail.subject).toBe('Alert resolved: Payments blocks');
      await waitUntil(
        'the resolved webhook',
        () => verifiedFrom(hookSecret, channel, 'alert.resolved').length === 1,
      );
      await waitUntil(
        'the resolved event',
        () => verifiedFrom(subscriberSecret, subscriber, 'alert.resolved').length === 1,
      );
      await waitUntil('the resolved Slack message', () => slackTexts().length === 2);
      expect(slackTexts()[1]).toContain('resolved');

      const history = await historyOf(id);
      expect(history.pagination.total).toBe(2);
      expect(history.data.map((t: { from: string; to: string }) => `${t.from}>${t.to}`)).toEqual([
        'firing>ok',
        'ok>firing',
      ]);
      expect(history.data[1]).toMatchObject({
        value: 0.4,
        threshold: 0.3,
        metric: 'block_rate',
        notified: 3,
      });
      expect(await auditEntriesOf(ctx, owner.organization.id, 'alert.resolved')).toHaveLength(1);
      expect(
        mail.forRecipient('oncall@example.com').filter((m) => m.subject.includes('Payments blocks')),
      ).toHaveLength(2);
      await ctx.patch(`${ALERTS}/${id}`, { token: owner.token, body: { isActive: false } });
    });

    it('measures every metric against its threshold with the clock moved', async () => {
      const made: Record<string, string> = {};
      const add = async (name: string, body: Record<string, unknown>) => {
        const res = await create(rule({ name, integrationIds: [hookId], ...body }));
        expect(res.statusCode, res.body).toBe(201);
        made[name] = res.json().data.id;
      };
      await add('flags', { metric: 'flag_rate', threshold: 0.25, agentId: calm.id });
      await add('unsure', { metric: 'low_confidence_rate', threshold: 0.25, agentId: calm.id });
      await add('volume', { metric: 'trace_volume', threshold: 8, windowMinutes: 5, agentId: calm.id });
      await add('quiet', {
        metric: 'trace_volume',
        comparison: 'lt',
        threshold: 1,
        windowMinutes: 5,
        agentId: calm.id,
      });
      await add('backlog', { metric: 'review_backlog', threshold: 2, agentId: calm.id });
      await add('overdue', { metric: 'overdue_incidents', threshold: 0 });
      const firing = async () => {
        const out: string[] = [];
        for (const [name, id] of Object.entries(made))
          if ((await stateOf(id)).state === 'firing') out.push(name);
        return out.sort();
      };

      await nextTick(61 * MINUTE); // earlier tests' traces leave the windows
      await ingest(calm.key, 6, clean);
      await nextTick();
      expect(await firing()).toEqual([]);

      // 3 low-confidence traces: flagged (a review item each); 3 of 9 is above 0.25 for both rates; 9 > 8 traces;
      // 3 items awaiting review > 2.
      await ingest(calm.key, 3, unsure);
      await nextTick();
      expect(await firing()).toEqual(['backlog', 'flags', 'unsure', 'volume']);
      expect((await stateOf(made.unsure!)).lastValue).toBeCloseTo(3 / 9, 6);
      expect((await stateOf(made.backlog!)).lastValue).toBe(3);

      // An incident whose 2-day deadline passes.
      const incident = await ctx.post('/api/v1/incidents', {
        token: owner.token,
        body: {
          title: 'Outage',
          category: 'critical_infrastructure',
          awareAt: ctx.clock.now().toISOString(),
        },
      });
      expect(incident.statusCode, incident.body).toBe(201);
      await nextTick();
      expect((await stateOf(made.overdue!)).state).toBe('ok');
      await nextTick(2 * 86_400_000 + MINUTE);
      // Two days on: the traces left every window (quiet fires: 0 < 1), the incident is overdue; rates without traces
      // keep their state, the review items still wait.
      expect(await firing()).toEqual(['backlog', 'flags', 'overdue', 'quiet', 'unsure']);
      expect((await stateOf(made.volume!)).lastValue).toBe(0);

      // quiet fired before the first traces, resolved, and fired again; volume fired and resolved.
      expect((await transitionsOf(made.quiet!)).map((t) => t.toState)).toEqual(['firing', 'ok', 'firing']);
      expect((await transitionsOf(made.volume!)).map((t) => t.toState)).toEqual(['firing', 'ok']);
      expect(verifiedFrom(hookSecret, channel, 'alert.triggered').length).toBeGreaterThanOrEqual(1);
      await waitUntil('one webhook per transition', async () => {
        const rows = await ctx.db.db
          .select()
          .from(alertTransitions)
          .where(eq(alertTransitions.organizationId, owner.organization.id));
        const mine = rows.filter((r) => Object.values(made).includes(r.alertId));
        const sent = [
          ...verifiedFrom(hookSecret, channel, 'alert.triggered'),
          ...verifiedFrom(hookSecret, channel, 'alert.resolved'),
        ].filter((e) => Object.values(made).includes(e.data.alertId as string));
        return sent.length === mine.length;
      });
      for (const id of Object.values(made))
        await ctx.patch(`${ALERTS}/${id}`, { token: owner.token, body: { isActive: false } });
      // Switched off: resting at ok, not evaluated.
      expect(await firing()).toEqual([]);
    });

    it('notifies once per transition with two instances evaluating together', async () => {
      const replica = await replicaContext(ctx);
      try {
        const id = (
          await create(
            rule({
              name: 'Twin',
              metric: 'trace_volume',
              threshold: 2,
              windowMinutes: 5,
              integrationIds: [slackId, hookId],
              agentId: agent.id,
            }),
          )
        ).json().data.id as string;
        ctx.clock.advance(10 * MINUTE);
        await ingest(agent.key, 3, clean);
        replica.clock.set(ctx.clock.now());
        const before = channel.received.length;
        // Both schedulers tick at once, and both evaluators also evaluate the same stale row.
        const [row] = await ctx.db.db.select().from(alertRules).where(eq(alertRules.id, id));
        const now = ctx.clock.now();
        await Promise.all([
          tick(),
          tick(replica),
          ctx.app.get(AlertEvaluatorJob).evaluate(row!, now),
          replica.app.get(AlertEvaluatorJob).evaluate(row!, now),
        ]);
        expect((await stateOf(id)).state).toBe('firing');
        expect(await transitionsOf(id)).toHaveLength(1);
        await waitUntil('the two notifications', () => channel.received.length >= before + 2);
        await new Promise((r) => setTimeout(r, 300));
        const arrived = channel.received.slice(before);
        expect(arrived).toHaveLength(2);
        const audit = (await auditEntriesOf(ctx, owner.organization.id, 'alert.triggered')).filter(
          (a) => a.targetId === id,
        );
        expect(audit).toHaveLength(1);
        await ctx.patch(`${ALERTS}/${id}`, { token: owner.token, body: { isActive: false } });
      } finally {
        await replica.close();
      }
    });

    it('retries a refused notification through the outbox with the same webhook-id', async () => {
      const id = (
        await create(
          rule({
            name: 'Retried',
            metric: 'trace_volume',
            threshold: 0,
            windowMinutes: 5,
            integrationIds: [hookId],
            agentId: agent.id,
          }),
        )
      ).json().data.id as string;
      ctx.clock.advance(10 * MINUTE);
      await ingest(agent.key, 1, clean);
      const before = channel.received.length;
      channel.answer({ status: 503, headers: { 'retry-after': '5' } });
      await nextTick();
      await waitUntil('the refused attempt', () => channel.received.length === before + 1);
      const first = channel.received[before]!;
      ctx.clock.advance(6_000);
      await ctx.app.get(JobScheduler).runNow('outbox');
      await waitUntil('the retry', () => channel.received.length === before + 2);
      const second = channel.received[before + 1]!;
      expect(second.headers['webhook-id']).toBe(first.headers['webhook-id']);
      const verified = verify(hookSecret, second);
      expect(verified).toMatchObject({ type: 'alert.triggered', data: { alertId: id, name: 'Retried' } });
      await ctx.patch(`${ALERTS}/${id}`, { token: owner.token, body: { isActive: false } });
    });

    it('drops a stale evaluation: the rule edited, or claimed again, since it was read', async () => {
      const id = (
        await create(
          rule({ name: 'Stale', metric: 'trace_volume', threshold: 0, windowMinutes: 5, agentId: agent.id }),
        )
      ).json().data.id as string;
      ctx.clock.advance(10 * MINUTE);
      await ingest(agent.key, 1, clean);
      const [read] = await ctx.db.db.select().from(alertRules).where(eq(alertRules.id, id));
      ctx.clock.advance(1000);
      await ctx.patch(`${ALERTS}/${id}`, { token: owner.token, body: { windowMinutes: 6 } });
      const evaluator = ctx.app.get(AlertEvaluatorJob);
      expect(await evaluator.evaluate(read!, ctx.clock.now())).toBe('raced');
      // Claimed again by a tick: the first claim's evaluation is stale too.
      const [edited] = await ctx.db.db.select().from(alertRules).where(eq(alertRules.id, id));
      await tick();
      expect(await evaluator.evaluate(edited!, ctx.clock.now())).toBe('raced');
      expect(await transitionsOf(id)).toHaveLength(1); // the tick's
      await ctx.patch(`${ALERTS}/${id}`, { token: owner.token, body: { isActive: false } });
    });

    it('escapes Slack’s control sequences in what it posts', async () => {
      const id = (
        await create(
          rule({
            name: '<!channel> <https://evil.example|bank> & co',
            metric: 'trace_volume',
            threshold: 0,
            windowMinutes: 5,
            agentId: agent.id,
            integrationIds: [slackId],
          }),
        )
      ).json().data.id as string;
      ctx.clock.advance(10 * MINUTE);
      await ingest(agent.key, 1, clean);
      const before = slackTexts().length;
      await nextTick();
      await waitUntil('the Slack message', () => slackTexts().length === before + 1);
      const text = slackTexts().at(-1)!;
      expect(text).toContain('&lt;!channel&gt; &lt;https://evil.example|bank&gt; &amp; co');
      expect(text).not.toMatch(/<!channel>|<https:/);
      await ctx.patch(`${ALERTS}/${id}`, { token: owner.token, body: { isActive: false } });
    });

    it('writes and sends nothing for an organization deleted meanwhile', async () => {
      const leaving = await ctx.register({ organizationName: 'Leaving' });
      const leavingAgent = await ctx.newAgent(leaving.organization.id, 'Their agent');
      const hook = (
        await ctx.post(INTEGRATIONS, {
          token: leaving.token,
          body: { type: 'webhook', name: 'Hook', config: { url: channel.url } },
        })
      ).json().data;
      const ruleOf = async (name: string) =>
        (
          await ctx.post(ALERTS, {
            token: leaving.token,
            body: rule({
              name,
              metric: 'trace_volume',
              threshold: 0,
              windowMinutes: 5,
              integrationIds: [hook.id],
            }),
          })
        ).json().data.id as string;
      const retried = await ruleOf('Retried after deletion');
      ctx.clock.advance(10 * MINUTE);
      expect((await ctx.post(TRACES, { apiKey: leavingAgent.key, body: clean })).statusCode).toBe(201);
      // A notification refused once, waiting for its retry.
      const before = channel.received.length;
      channel.answer({ status: 503 });
      await nextTick();
      await waitUntil('the refused attempt', () => channel.received.length === before + 1);
      expect((await transitionsOf(retried)).map((t) => t.toState)).toEqual(['firing']);
      // A rule claimed before the deletion and evaluated after it.
      const raced = await ruleOf('Claimed before deletion');
      const [claimed] = await ctx.db.db.select().from(alertRules).where(eq(alertRules.id, raced));
      const deleted = await ctx.delete('/api/v1/organizations/current', {
        token: leaving.token,
        body: { confirmName: 'Leaving' },
      });
      expect(deleted.statusCode, deleted.body).toBe(202);
      expect(await ctx.app.get(AlertEvaluatorJob).evaluate(claimed!, ctx.clock.now())).toBe('raced');
      expect(await transitionsOf(raced)).toHaveLength(0);
      ctx.clock.advance(10 * MINUTE);
      await ctx.app.get(JobScheduler).runNow('outbox');
      await new Promise((r) => setTimeout(r, 300));
      expect(channel.received.length).toBe(before + 1);
    });

    it('lists the period’s transitions in the digest’s alerts section', async () => {
      await ctx.setPlan(owner.organization.id, 'governance');
      const report = await ctx.post('/api/v1/reports/schedule', {
        token: owner.token,
        body: { name: 'Weekly', frequency: 'weekly', recipients: ['digest@example.com'] },
      });
      expect(report.statusCode, report.body).toBe(201);
      const sent = await ctx.post(`/api/v1/reports/send-now/${report.json().data.id}`, {
        token: owner.token,
      });
      expect(sent.statusCode, sent.body).toBe(200);
      const digest = await simpleParser((await mail.waitFor('digest@example.com')).raw);
      const transitions = await ctx.db.db
        .select()
        .from(alertTransitions)
        .where(and(eq(alertTransitions.organizationId, owner.organization.id)));
      expect(transitions.length).toBeGreaterThan(2);
      expect(digest.text).toContain(`Alert transitions: ${transitions.length}`);
      expect(digest.text).toContain('Payments blocks: triggered: block rate 40.0 % > 30.0 %');
      expect(digest.text).toContain('Payments blocks: resolved: block rate 0.0 %');
      expect(digest.html).toContain('Payments blocks');
    });
  });

  it('purges transitions older than 400 days, and keeps the newer ones', async () => {
    const DAY = 86_400_000;
    const before = await ctx.db.db.select().from(alertTransitions);
    const times = before.map((t) => t.createdAt.getTime());
    const [oldest, newest] = [Math.min(...times), Math.max(...times)];
    expect(newest - oldest).toBeGreaterThan(DAY); // the clock was moved by days above
    // 400 days after the newest, less a minute: the newest stay, the older ones go.
    ctx.clock.set(new Date(newest + 400 * DAY - 60_000));
    await ctx.app.get(JobScheduler).runNow('alert-transitions-purge');
    const kept = await ctx.db.db.select().from(alertTransitions);
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.length).toBeLessThan(before.length);
    const cutoff = ctx.clock.nowMs() - 400 * DAY;
    expect(kept.every((t) => t.createdAt.getTime() >= cutoff - 1000)).toBe(true);
    ctx.clock.advance(2 * 60_000);
    await ctx.app.get(JobScheduler).runNow('alert-transitions-purge');
    expect(await ctx.db.db.select().from(alertTransitions)).toHaveLength(0);
  });
});
