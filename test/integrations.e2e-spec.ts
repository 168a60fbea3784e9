import { eq } from 'drizzle-orm';
import { simpleParser } from 'mailparser';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { integrations } from '../libs/governance/src/integrations/integration.schema.js';
import { type Registered, TestContext } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';
import { auditEntriesOf } from './support/audit-entries.js';
import { MailCatcher } from './support/mail-catcher.js';
import { WebhookReceiver } from './support/webhook-receiver.js';

const INTEGRATIONS = '/api/v1/integrations';

describe('integrations', () => {
  let ctx: TestContext;
  let guarded: TestContext;
  let mail: MailCatcher;
  let receiver: WebhookReceiver;
  let owner: Registered;
  let other: Registered;
  let admin: { token: string };
  let member: { token: string; userId: string };
  let member2: { token: string };
  let viewer: { token: string };

  beforeAll(async () => {
    mail = await MailCatcher.start();
    receiver = await WebhookReceiver.start();
    // The receiver listens on loopback: this context allows private targets, `guarded` does not.
    ctx = await TestContext.create({ config: { smtpUrl: mail.url, webhookAllowPrivateNetworks: true } });
    guarded = await TestContext.create({ config: { webhookAllowPrivateNetworks: false } });
    owner = await ctx.register({ organizationName: 'Notified' });
    other = await ctx.register({ organizationName: 'Elsewhere' });
    admin = await ctx.addMember(owner.organization.id, 'admin');
    member = await ctx.addMember(owner.organization.id, 'member');
    member2 = await ctx.addMember(owner.organization.id, 'member');
    viewer = await ctx.addMember(owner.organization.id, 'viewer');
  });
  afterAll(async () => {
    await ctx?.close();
    await guarded?.close();
    await receiver?.close();
    await mail?.stop();
  });

  const create = (body: Record<string, unknown>, token = owner.token, context = ctx) =>
    context.post(INTEGRATIONS, { token, body });

  it('creates each type, keeps the URL write-only and sealed, and answers a webhook’s secret once', async () => {
    const email = await create({
      type: 'email',
      name: ' On call ',
      config: { recipients: ['Ops@Example.com', 'ops@example.com', 'sre@example.com'] },
    });
    expect(email.statusCode, email.body).toBe(201);
    expect(email.json().data).toMatchObject({
      type: 'email',
      name: 'On call',
      config: {
        recipients: ['ops@example.com', 'sre@example.com'],
        pending: ['ops@example.com', 'sre@example.com'],
      },
      createdBy: owner.user.id,
    });
    expect(email.json().data).not.toHaveProperty('secret');

    const slackUrl = `${receiver.url}/slack/T000/B000/SECRETTOKEN`;
    const slack = await create({ type: 'slack', name: 'Slack', config: { url: slackUrl } });
    expect(slack.statusCode, slack.body).toBe(201);
    expect(slack.json().data.config).toEqual({ urlHost: new URL(receiver.url).origin });
    expect(slack.body).not.toContain('SECRETTOKEN');
    const [stored] = await ctx.db.db
      .select()
      .from(integrations)
      .where(eq(integrations.id, slack.json().data.id));
    expect(stored!.urlSealed).toBeTruthy();
    expect(stored!.urlSealed).not.toContain('SECRETTOKEN');

    const hook = await create({ type: 'webhook', name: 'SIEM', config: { url: receiver.url } });
    expect(hook.statusCode).toBe(201);
    expect(hook.json().data.secret).toMatch(/^whsec_[A-Za-z0-9+/=]{40,}$/);
    const again = await ctx.get(`${INTEGRATIONS}/${hook.json().data.id}`, { token: viewer.token });
    expect(again.json().data).not.toHaveProperty('secret');
    expect(again.body).not.toContain(hook.json().data.secret);

    const list = await ctx.get(INTEGRATIONS, { token: viewer.token });
    expect(list.json().pagination.total).toBe(3);
    expect((await ctx.get(INTEGRATIONS, { token: other.token })).json().pagination.total).toBe(0);
    const audit = await auditEntriesOf(ctx, owner.organization.id, 'integration.create');
    expect(audit).toHaveLength(3);
    expect(JSON.stringify(audit)).not.toContain('SECRETTOKEN');
  });

  it('refuses a bad type or config with 400, and a private address behind the SSRF guard', async () => {
    const bad: Array<Record<string, unknown>> = [
      { type: 'pager', name: 'x', config: { url: receiver.url } },
      { type: 'email', name: '', config: { recipients: ['a@example.com'] } },
      { type: 'email', name: 'x', config: { recipients: [] } },
      { type: 'email', name: 'x', config: { recipients: ['not-an-address'] } },
      {
        type: 'email',
        name: 'x',
        config: { recipients: Array.from({ length: 21 }, (_, i) => `r${i}@example.com`) },
      },
      { type: 'email', name: 'x', config: { recipients: ['a@example.com'], url: receiver.url } },
      { type: 'slack', name: 'x', config: { url: 'ftp://example.com/hook' } },
      { type: 'slack', name: 'x', config: {} },
      { type: 'webhook', name: 'x', config: { url: 42 } },
      { type: 'webhook', name: 'x', config: 'https://example.com' },
    ];
    for (const body of bad) expectErrorEnvelope(await create(body), 400, 'VALIDATION_ERROR');
    const boss = await guarded.register({ organizationName: 'Guarded' });
    for (const url of [
      'http://127.0.0.1:9/hook',
      'http://169.254.169.254/latest/meta-data',
      'http://10.0.0.1/x',
    ]) {
      const res = await create({ type: 'webhook', name: 'x', config: { url } }, boss.token, guarded);
      expectErrorEnvelope(res, 400, 'WEBHOOK_URL_NOT_ALLOWED');
    }
  });

  it('sends a test: an e-mail, a Slack message and a signed Standard Webhooks envelope', async () => {
    // A member's address is confirmed at once (another address would first confirm by its link).
    const email = (
      await create({ type: 'email', name: 'Test mail', config: { recipients: [owner.user.email] } })
    ).json().data;
    expect(email.config).toEqual({ recipients: [owner.user.email], pending: [] });
    const sent = await ctx.post(`${INTEGRATIONS}/${email.id}/test`, { token: owner.token });
    expect(sent.statusCode, sent.body).toBe(200);
    expect(sent.json().data).toEqual({ delivered: true, sent: 1 });
    const message = await simpleParser((await mail.waitFor(owner.user.email)).raw);
    expect(message.subject).toBe('Test notification from the governance service');
    expect(message.text).toContain('Channel, as named by the organization: "Test mail"');

    const slack = (
      await create({ type: 'slack', name: 'Test slack', config: { url: `${receiver.url}/slack` } })
    ).json().data;
    const before = receiver.received.length;
    const slackSent = await ctx.post(`${INTEGRATIONS}/${slack.id}/test`, { token: owner.token });
    expect(slackSent.json().data).toEqual({ delivered: true, status: 200 });
    const slackBody = receiver.received[before]!;
    expect(slackBody.json).toEqual({ text: expect.stringContaining('"Test slack"') });

    const created = await create({ type: 'webhook', name: 'Test hook', config: { url: receiver.url } });
    const { id, secret } = created.json().data;
    const hookSent = await ctx.post(`${INTEGRATIONS}/${id}/test`, { token: owner.token });
    expect(hookSent.json().data).toEqual({ delivered: true, status: 200 });
    const hook = receiver.received.at(-1)!;
    const verified = new Webhook(secret).verify(hook.body, hook.headers as Record<string, string>) as {
      type: string;
      data: Record<string, unknown>;
    };
    expect(verified.type).toBe('integration.test');
    expect(verified.data).toEqual({ integrationId: id, organizationId: owner.organization.id });

    // A receiver that refuses: delivered false with its status; a mail server that refuses: the reason.
    receiver.answer({ status: 500, body: 'down' });
    const refused = await ctx.post(`${INTEGRATIONS}/${id}/test`, { token: owner.token });
    expect(refused.json().data).toMatchObject({ delivered: false, status: 500 });
    mail.refuse = true;
    try {
      const noMail = await ctx.post(`${INTEGRATIONS}/${email.id}/test`, { token: owner.token });
      expect(noMail.json().data).toMatchObject({ delivered: false, error: expect.any(String) });
    } finally {
      mail.refuse = false;
    }
  });

  it('lets members change only their own; owners and admins any; viewers none', async () => {
    const mine = (
      await create({ type: 'email', name: 'Mine', config: { recipients: ['m@example.com'] } }, member.token)
    ).json().data;
    const ownersOwn = (
      await create({ type: 'email', name: 'Owner’s', config: { recipients: ['o@example.com'] } })
    ).json().data;
    expect(mine.createdBy).toBe(member.userId);
    expectErrorEnvelope(
      await create({ type: 'email', name: 'x', config: { recipients: ['v@example.com'] } }, viewer.token),
      403,
      'FORBIDDEN',
    );
    // Another member may not edit, test or delete it; the creator may.
    const url = `${INTEGRATIONS}/${mine.id}`;
    expectErrorEnvelope(
      await ctx.patch(url, { token: member2.token, body: { name: 'No' } }),
      403,
      'FORBIDDEN',
    );
    expectErrorEnvelope(await ctx.post(`${url}/test`, { token: member2.token }), 403, 'FORBIDDEN');
    expectErrorEnvelope(await ctx.delete(url, { token: member2.token }), 403, 'FORBIDDEN');
    const renamed = await ctx.patch(url, {
      token: member.token,
      body: { name: 'Mine, renamed', config: { recipients: ['new@example.com'] } },
    });
    expect(renamed.statusCode, renamed.body).toBe(200);
    expect(renamed.json().data).toMatchObject({
      name: 'Mine, renamed',
      config: { recipients: ['new@example.com'] },
    });
    expectErrorEnvelope(
      await ctx.patch(`${INTEGRATIONS}/${ownersOwn.id}`, { token: member.token, body: { name: 'No' } }),
      403,
      'FORBIDDEN',
    );
    // An admin edits anyone's; the creator deletes their own; the owner deletes anyone's.
    expect((await ctx.patch(url, { token: admin.token, body: { name: 'By admin' } })).statusCode).toBe(200);
    const deleted = await ctx.delete(url, { token: member.token });
    expect(deleted.json().data).toEqual({ id: mine.id, deleted: true });
    expectErrorEnvelope(await ctx.get(url, { token: owner.token }), 404, 'NOT_FOUND');
    expect((await ctx.delete(`${INTEGRATIONS}/${ownersOwn.id}`, { token: admin.token })).statusCode).toBe(
      200,
    );
    // Another organization's integration is not found.
    expectErrorEnvelope(
      await ctx.get(`${INTEGRATIONS}/${ownersOwn.id}`, { token: other.token }),
      404,
      'NOT_FOUND',
    );
    const audit = await auditEntriesOf(ctx, owner.organization.id, 'integration.delete');
    expect(audit.map((a) => a.targetId)).toEqual(expect.arrayContaining([mine.id, ownersOwn.id]));
  });
});
