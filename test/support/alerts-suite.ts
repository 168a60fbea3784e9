import { eq } from 'drizzle-orm';
import { Webhook } from 'standardwebhooks';
import { expect, vi } from 'vitest';
import { alertTransitions } from '../../libs/compliance/src/alerts/alert.schema.js';
import { JobScheduler } from '#platform';
import { type Registered, TestContext } from './app.js';
import type { TestAgent } from './builders.js';
import { MailCatcher } from './mail-catcher.js';
import { SuiteFixture, useSuite } from './suite.js';
import { cardAndConfidencePolicies, TRACES, traceBody } from './traces-suite.js';
import { WebhookReceiver } from './webhook-receiver.js';

export const ALERTS = '/api/v1/alerts';
export const INTEGRATIONS = '/api/v1/integrations';
export const MINUTE = 60_000;
export const INTERVAL = 60_000;

export interface Envelope {
  type: string;
  data: Record<string, unknown>;
}

export const rule = (over: Record<string, unknown> = {}) => ({
  name: 'Block rate jump',
  metric: 'block_rate',
  comparison: 'gt',
  threshold: 0.3,
  windowMinutes: 60,
  ...over,
});
export const clean = traceBody();
export const blocked = traceBody({}, { prompt: 'Please read me the card number on file' });
export const unsure = traceBody({ confidence: 0.2 });

/**
 * Verifies a Standard Webhooks signature as a receiver whose clock reads the message's time: the service's clock
 * is moved by hours and days here, and the package checks the signed timestamp against its own.
 */
export const verify = (
  secret: string,
  hook: { body: string; headers: Record<string, unknown> },
): Envelope => {
  vi.setSystemTime(Number(hook.headers['webhook-timestamp']) * 1000);
  try {
    return new Webhook(secret).verify(hook.body, hook.headers as Record<string, string>) as Envelope;
  } finally {
    vi.useRealTimers();
  }
};
export const verifiedFrom = (secret: string, receiver: WebhookReceiver, type: string): Envelope[] =>
  receiver.ofType(type).flatMap((hook) => {
    try {
      return [verify(secret, hook)];
    } catch {
      return [];
    }
  });
export const waitUntil = async (what: string, ok: () => boolean | Promise<boolean>, timeoutMs = 5000) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
};

/**
 * The alert suites' world: an organization with members of every role, agents, a block and a flag policy, and three
 * integrations (a confirmed e-mail address, Slack and a signed webhook, both posting to `channel`), plus a webhook of
 * the webhooks module subscribed to the alert events (posting to `subscriber`); another organization with its own
 * agent. Its fields are set before the first test (read them inside a test); its helpers may be taken at once.
 */
export class AlertsSuite extends SuiteFixture {
  ctx!: TestContext;
  mail!: MailCatcher;
  /** Slack and signed-webhook integrations post here. */
  channel!: WebhookReceiver;
  /** A webhook of the webhooks module, subscribed to the alert events. */
  subscriber!: WebhookReceiver;
  owner!: Registered;
  other!: Registered;
  admin!: { token: string };
  member!: { token: string; userId: string };
  viewer!: { token: string };
  agent!: TestAgent;
  calm!: TestAgent;
  otherAgent!: TestAgent;
  emailId!: string;
  slackId!: string;
  hookId!: string;
  hookSecret!: string;
  subscriberSecret!: string;

  readonly create = (body: Record<string, unknown>, token = this.owner.token) =>
    this.ctx.post(ALERTS, { token, body });
  readonly tick = (c: TestContext = this.ctx) => c.app.get(JobScheduler).runNow('alerts');
  /** Moves the clock past the interval, so every active rule is due again, and runs the evaluator. */
  readonly nextTick = async (ms = INTERVAL) => {
    this.ctx.clock.advance(ms);
    await this.tick();
  };
  readonly ingest = async (key: string, n: number, body: Record<string, unknown>) => {
    for (let i = 0; i < n; i++) {
      const res = await this.ctx.post(TRACES, { apiKey: key, body });
      expect([201, 202, 403]).toContain(res.statusCode);
    }
  };
  readonly stateOf = async (id: string) =>
    (await this.ctx.get(`${ALERTS}/${id}`, { token: this.viewer.token })).json().data;
  readonly historyOf = async (id: string) =>
    (await this.ctx.get(`${ALERTS}/${id}/history`, { token: this.viewer.token })).json();
  readonly transitionsOf = (id: string) =>
    this.ctx.db.db.select().from(alertTransitions).where(eq(alertTransitions.alertId, id));
  readonly slackTexts = () =>
    this.channel.received
      .filter((r) => r.json.type === undefined)
      .map((r) => (r.json as unknown as { text: string }).text);

  async start(): Promise<void> {
    this.mail = await this.open(MailCatcher.start(), (mail) => mail.stop());
    this.channel = await this.open(WebhookReceiver.start(), (receiver) => receiver.close());
    this.subscriber = await this.open(WebhookReceiver.start(), (receiver) => receiver.close());
    // The clock starts at the real time: receivers check a Standard Webhooks timestamp against theirs.
    const ctx = await this.openApp({
      config: {
        smtpUrl: this.mail.url,
        webhookAllowPrivateNetworks: true,
        workers: false,
        alertIntervalMs: INTERVAL,
      },
    });
    this.ctx = ctx;
    const owner = await ctx.register({ organizationName: 'Alerted' });
    this.owner = owner;
    this.other = await ctx.register({ organizationName: 'Not alerted' });
    this.admin = await ctx.addMember(owner.organization.id, 'admin');
    this.member = await ctx.addMember(owner.organization.id, 'member');
    this.viewer = await ctx.addMember(owner.organization.id, 'viewer');
    this.agent = await ctx.newAgent(owner.organization.id, 'Payments agent');
    this.calm = await ctx.newAgent(owner.organization.id, 'Calm agent');
    this.otherAgent = await ctx.newAgent(this.other.organization.id, 'Their agent');
    await cardAndConfidencePolicies(ctx, owner.organization.id, { name: 'Unsure', below: 0.5 });
    const integration = async (body: Record<string, unknown>) => {
      const res = await ctx.post(INTEGRATIONS, { token: owner.token, body });
      expect(res.statusCode, res.body).toBe(201);
      return res.json().data as { id: string; secret?: string };
    };
    this.emailId = (
      await integration({ type: 'email', name: 'On call', config: { recipients: ['oncall@example.com'] } })
    ).id;
    // Not a member: the address confirms by its link before it receives anything (docs/compliance-officers.md,
    // "Integrations").
    const link = await this.mail.waitFor('oncall@example.com', (m) =>
      m.decoded.includes('/integrations/confirm?token='),
    );
    const token = MailCatcher.tokenFrom(link, '/integrations/confirm?token=');
    expect((await ctx.post(`${INTEGRATIONS}/confirm`, { body: { token } })).statusCode).toBe(200);
    this.slackId = (
      await integration({ type: 'slack', name: 'Slack', config: { url: `${this.channel.url}/slack/T/B/X` } })
    ).id;
    const hook = await integration({ type: 'webhook', name: 'SIEM', config: { url: this.channel.url } });
    this.hookId = hook.id;
    this.hookSecret = hook.secret!;
    const sub = await ctx.post('/api/v1/webhooks', {
      token: owner.token,
      body: { url: this.subscriber.url, events: ['alert.triggered', 'alert.resolved'] },
    });
    expect(sub.statusCode, sub.body).toBe(201);
    this.subscriberSecret = sub.json().data.secret;
  }
}

/** An alert suite, registered in the calling `describe`. */
export const alertsSuite = () => useSuite(new AlertsSuite());
