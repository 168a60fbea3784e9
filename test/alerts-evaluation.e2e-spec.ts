import { and, eq } from 'drizzle-orm';
import { simpleParser } from 'mailparser';
import { describe, expect, it } from 'vitest';
import { JobScheduler } from '#platform';
import { AlertEvaluatorJob } from '../libs/compliance/src/alerts/alert-evaluator.job.js';
import { alertRules, alertTransitions } from '../libs/compliance/src/alerts/alert.schema.js';
import { replicaContext } from './support/app.js';
import {
  alertsSuite,
  ALERTS,
  blocked,
  clean,
  INTEGRATIONS,
  MINUTE,
  rule,
  unsure,
  verifiedFrom,
  verify,
  waitUntil,
} from './support/alerts-suite.js';
import { auditEntriesOf } from './support/audit-entries.js';
import { TRACES } from './support/traces-suite.js';

/**
 * Alert rules at work, in order on one clock: a rule fires and resolves with its e-mail, Slack message, signed
 * webhook, event, audit and history; every metric against its threshold; one notification per transition with two
 * instances; retries through the outbox; stale evaluations dropped; Slack's control sequences escaped; nothing for a
 * deleted organization; the digest's alerts section; and the purge of old transitions (it needs the days the tests
 * before it moved the clock by). Rules as a resource: alerts-rules.
 */
describe('alert rules', () => {
  const s = alertsSuite();
  const { create, tick, nextTick, ingest, stateOf, historyOf, transitionsOf, slackTexts } = s;

  describe('evaluation and notifications', () => {
    it('fires on a block-rate jump: one e-mail, Slack message and signed webhook, the event, audit and history; then resolves', async () => {
      const {
        ctx,
        mail,
        channel,
        subscriber,
        owner,
        agent,
        calm,
        emailId,
        slackId,
        hookId,
        hookSecret,
        subscriberSecret,
      } = s;
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
      const { ctx, channel, owner, calm, hookId, hookSecret } = s;
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
      const { ctx, channel, owner, agent, slackId, hookId } = s;
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
      const { ctx, channel, owner, agent, hookId, hookSecret } = s;
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
      // The refused attempt is recorded, due again after its Retry-After, once the service has read the 503, which
      // can be after the receiver saw the request: run the pass, past the Retry-After each time, until the retry.
      for (let pass = 0; channel.received.length < before + 2; pass++) {
        if (pass === 20) throw new Error('Timed out waiting for the retry');
        ctx.clock.advance(6_000);
        await ctx.app.get(JobScheduler).runNow('outbox');
        await waitUntil('the retry', () => channel.received.length === before + 2, 250).catch(() => undefined);
      }
      expect(channel.received.length).toBe(before + 2);
      const second = channel.received[before + 1]!;
      expect(second.headers['webhook-id']).toBe(first.headers['webhook-id']);
      const verified = verify(hookSecret, second);
      expect(verified).toMatchObject({ type: 'alert.triggered', data: { alertId: id, name: 'Retried' } });
      await ctx.patch(`${ALERTS}/${id}`, { token: owner.token, body: { isActive: false } });
    });

    it('drops a stale evaluation: the rule edited, or claimed again, since it was read', async () => {
      const { ctx, owner, agent } = s;
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
      const { ctx, owner, agent, slackId } = s;
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
      const { ctx, channel } = s;
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
      const { ctx, mail, owner } = s;
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
    const { ctx } = s;
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
