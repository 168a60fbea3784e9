import { eq } from 'drizzle-orm';
import { type ParsedMail, simpleParser } from 'mailparser';
import { expect } from 'vitest';
import { scheduledReports } from '../../libs/compliance/src/reports/scheduled-report.schema.js';
import { JobScheduler } from '#platform';
import { type Registered, TestContext } from './app.js';
import type { TestAgent } from './builders.js';
import { MailCatcher } from './mail-catcher.js';
import { SuiteFixture, useSuite } from './suite.js';
import { cardAndConfidencePolicies, TRACES, traceBody } from './traces-suite.js';

export const SCHEDULE = '/api/v1/reports/schedule';
export const SEND_NOW = '/api/v1/reports/send-now';
export const START = '2026-05-04T08:00:00.000Z';
export const DAY = 86_400_000;
export const APP_URL = 'http://app.gov.test';

async function parsed(raw: string): Promise<ParsedMail> {
  return simpleParser(raw);
}

/**
 * The scheduled reports suites' world, at START: an organization on the governance plan with two agents, a block and
 * a flag policy, a day of traces before START (4 for the advisor: 2 approved, 1 flagged at 0.3, 1 blocked; 1 for
 * the quiet agent) and an open incident; another organization on the same plan; mail. Its fields are set before the
 * first test (read them inside a test); its helpers may be taken at once.
 */
export class ScheduledReportsSuite extends SuiteFixture {
  ctx!: TestContext;
  mail!: MailCatcher;
  owner!: Registered;
  other!: Registered;
  agent!: TestAgent;
  quiet!: TestAgent;
  lowTraceId!: string;
  private counter = 0;

  readonly scheduler = () => this.ctx.app.get(JobScheduler);
  readonly tick = () => this.scheduler().runNow('scheduled-reports');
  readonly create = (body: Record<string, unknown>, token = this.owner.token) =>
    this.ctx.post(SCHEDULE, { token, body });
  readonly rowOf = async (id: string) =>
    (await this.ctx.db.db.select().from(scheduledReports).where(eq(scheduledReports.id, id)))[0]!;
  /** Messages whose Subject names the report. */
  readonly mailsOf = async (name: string) => {
    const all = await Promise.all(this.mail.messages.map((m) => parsed(m.raw)));
    return all.filter((m) => m.subject?.startsWith(`${name}:`));
  };
  readonly uniqueName = (prefix: string) => `${prefix} ${++this.counter}`;

  async start(): Promise<void> {
    this.mail = await this.open(MailCatcher.start(), (mail) => mail.stop());
    const ctx = await this.openApp({ now: START, config: { smtpUrl: this.mail.url, workers: false } });
    this.ctx = ctx;
    const owner = await ctx.register({ organizationName: 'Digest Org' });
    this.owner = owner;
    await ctx.setPlan(owner.organization.id, 'governance');
    this.other = await ctx.register({ organizationName: 'Other Digest Org' });
    await ctx.setPlan(this.other.organization.id, 'governance');
    const agent = await ctx.newAgent(owner.organization.id, 'Loan <advisor>');
    this.agent = agent;
    this.quiet = await ctx.newAgent(owner.organization.id, 'Quiet agent');
    await cardAndConfidencePolicies(ctx, owner.organization.id, { name: 'Low confidence', below: 0.5 });
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
    this.lowTraceId = await send(agent.key, traceBody({ confidence: 0.3 }));
    await send(agent.key, traceBody({ confidence: 0.7 }, { prompt: 'my card number is 4111' }));
    await send(this.quiet.key, traceBody({ confidence: 0.95 }));
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
  }

  /** Tests move the clock: each starts at START. */
  override beforeEach(): void {
    this.ctx.clock.set(new Date(START));
  }
}

/** A scheduled reports suite, registered in the calling `describe`. */
export const scheduledReportsSuite = () => useSuite(new ScheduledReportsSuite());
