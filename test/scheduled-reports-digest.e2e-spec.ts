import { describe, expect, it } from 'vitest';
import {
  APP_URL,
  DAY,
  SCHEDULE,
  scheduledReportsSuite,
  SEND_NOW,
} from './support/scheduled-reports-suite.js';
import { TRACES, traceBody } from './support/traces-suite.js';

/**
 * What a scheduled report's digest holds: HTML and text parts with the figures of the period since the last send
 * (metrics, top agents, alerts, low-confidence traces linked to the dashboard), each section switched by its flag.
 * Managing reports: scheduled-reports-manage; sending: scheduled-reports-sending.
 */
describe('scheduled reports', () => {
  const s = scheduledReportsSuite();
  const { tick, create, mailsOf, uniqueName } = s;

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
      const { ctx, owner, lowTraceId } = s;
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
      const { ctx, owner } = s;
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
      const { ctx, owner, quiet } = s;
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
