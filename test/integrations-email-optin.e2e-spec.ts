import { eq } from 'drizzle-orm';
import { simpleParser } from 'mailparser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MailService, sha256Hex, TransactionHost } from '#platform';
import { IntegrationNotifier } from '#governance';
import { integrations } from '../libs/governance/src/integrations/integration.schema.js';
import { type Registered, TestContext, uniqueEmail } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';
import { auditEntriesOf } from './support/audit-entries.js';
import { type CaughtMail, MailCatcher } from './support/mail-catcher.js';

const INTEGRATIONS = '/api/v1/integrations';
const CONFIRM = `${INTEGRATIONS}/confirm`;
const LINK = 'http://app.gov.test/integrations/confirm?token=';
const CONFIRM_SUBJECT = 'Confirm notifications from the governance service';
const TEST_SUBJECT = 'Test notification from the governance service';
const HOUR = 3600 * 1000;

/** The addresses of a message's To: header, as the recipient's client shows it. */
async function toHeader(mail: CaughtMail): Promise<string[]> {
  const parsed = await simpleParser(mail.raw);
  const to = Array.isArray(parsed.to) ? parsed.to : parsed.to ? [parsed.to] : [];
  return to.flatMap((a) => a.value.map((v) => v.address ?? ''));
}

describe('e-mail integrations: double opt-in and limits', () => {
  let ctx: TestContext;
  let mail: MailCatcher;
  let owner: Registered;
  let member: { userId: string; email: string; token: string };

  beforeAll(async () => {
    mail = await MailCatcher.start();
    ctx = await TestContext.create({ config: { smtpUrl: mail.url } });
    owner = await ctx.register({ organizationName: 'Opt-in' });
    member = await ctx.addMember(owner.organization.id, 'member');
  });
  afterAll(async () => {
    await ctx?.close();
    await mail?.stop();
  });

  const create = async (recipients: string[], token = owner.token, name = 'On call') => {
    const res = await ctx.post(INTEGRATIONS, {
      token,
      body: { type: 'email', name, config: { recipients } },
    });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().data as { id: string; config: { recipients: string[]; pending: string[] } };
  };
  const confirmation = (to: string) => mail.waitFor(to, (m) => m.subject === CONFIRM_SUBJECT);
  const tokenOf = async (to: string) => MailCatcher.tokenFrom(await confirmation(to), LINK);
  const confirm = (token: unknown) => ctx.post(CONFIRM, { body: { token } });
  const sendTest = (id: string, token = owner.token) => ctx.post(`${INTEGRATIONS}/${id}/test`, { token });
  /** An alert's notification through the integration, as the alert evaluator writes it (in a transaction). */
  const notify = (organizationId: string, integrationId: string, subject: string) =>
    ctx.service(TransactionHost).run(() =>
      ctx.service(IntegrationNotifier).enqueue(organizationId, [integrationId], {
        type: 'alert.triggered',
        subject,
        text: `${subject}: the block rate is above its threshold.`,
        data: {},
      }),
    );
  /** Every mail the service wrote to the outbox for this address (deliveries through the notifier included). */
  const outboxMailTo = async (to: string) =>
    (await ctx.service(MailService).list(500)).filter((m) => m.to === to).map((m) => m.subject);

  it('sends a non-member only the confirmation, and alerts and tests once confirmed; members at once', async () => {
    const outsider = uniqueEmail('outsider');
    const created = await create(
      [outsider, member.email],
      owner.token,
      'URGENT: reset your password at evil.test',
    );
    expect(created.config).toEqual({ recipients: [outsider, member.email], pending: [outsider] });

    const invite = await confirmation(outsider);
    expect(invite.to).toEqual([outsider]);
    expect(await toHeader(invite)).toEqual([outsider]);
    expect(invite.subject).not.toContain('URGENT');
    expect(invite.decoded).toContain(LINK);
    // The member is confirmed at once: no confirmation mail.
    expect(mail.forRecipient(member.email)).toHaveLength(0);

    // Before confirming: the test send and an alert reach the member alone.
    const first = await sendTest(created.id);
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json().data).toEqual({ delivered: true, sent: 1 });
    const test = await mail.waitFor(member.email, (m) => m.subject === TEST_SUBJECT);
    const parsed = await simpleParser(test.raw);
    expect(parsed.text!.startsWith('This is a test notification from the governance service')).toBe(true);
    expect(parsed.text).toContain('Channel, as named by the organization: "URGENT: reset your password');
    await notify(owner.organization.id, created.id, 'Alert triggered: before');
    await mail.waitFor(member.email, (m) => m.subject === 'Alert triggered: before');
    expect(await outboxMailTo(outsider)).toEqual([CONFIRM_SUBJECT]);
    expect(mail.forRecipient(outsider).map((m) => m.subject)).toEqual([CONFIRM_SUBJECT]);

    const confirmed = await confirm(MailCatcher.tokenFrom(invite, LINK));
    expect(confirmed.statusCode, confirmed.body).toBe(200);
    expect(confirmed.headers['cache-control']).toBe('no-store');
    expect(confirmed.json().data).toEqual({ integrationId: created.id, email: outsider, confirmed: true });
    const shown = await ctx.get(`${INTEGRATIONS}/${created.id}`, { token: member.token });
    expect(shown.json().data.config).toEqual({ recipients: [outsider, member.email], pending: [] });
    const audit = await auditEntriesOf(ctx, owner.organization.id, 'integration.recipient.confirmed');
    expect(audit.map((a) => [a.targetId, a.metadata])).toEqual([[created.id, { email: outsider }]]);

    // Confirmed: each recipient gets its own message, with only its own address in To.
    const second = await sendTest(created.id);
    expect(second.json().data).toEqual({ delivered: true, sent: 2 });
    await notify(owner.organization.id, created.id, 'Alert triggered: after');
    for (const to of [outsider, member.email]) {
      for (const subject of [TEST_SUBJECT, 'Alert triggered: after']) {
        const message = await mail.waitFor(to, (m) => m.subject === subject);
        expect(message.to).toEqual([to]);
        expect(await toHeader(message)).toEqual([to]);
      }
    }
    expect(mail.messages.every((m) => m.to.length === 1)).toBe(true);
  });

  it('accepts a token once, within 7 days, for its own organization’s integration only', async () => {
    const [a, b] = [uniqueEmail('once'), uniqueEmail('late')];
    const created = await create([a, b]);
    const tokenA = await tokenOf(a);
    const tokenB = await tokenOf(b);
    expect((await confirm(tokenA)).statusCode).toBe(200);
    expectErrorEnvelope(await confirm(tokenA), 400, 'INVALID_TOKEN');

    // Another organization lists the same address; its token confirms its own integration and nothing here.
    const stranger = await ctx.register({ organizationName: 'Stranger' });
    const theirs = await create([b], stranger.token);
    const theirToken = await mail.waitFor(
      b,
      (m) => m.subject === CONFIRM_SUBJECT && !m.decoded.includes(tokenB),
    );
    const tokenTheirs = MailCatcher.tokenFrom(theirToken, LINK);
    const secret = tokenTheirs.slice(48);
    for (const forged of [
      `${owner.organization.id}${created.id}${secret}`,
      `${owner.organization.id}${theirs.id}${secret}`,
      `${stranger.organization.id}${created.id}${tokenB.slice(48)}`,
    ]) {
      expectErrorEnvelope(await confirm(forged), 400, 'INVALID_TOKEN');
    }
    const ours = await ctx.get(`${INTEGRATIONS}/${created.id}`, { token: owner.token });
    expect(ours.json().data.config.pending).toEqual([b]);
    const done = await confirm(tokenTheirs);
    expect(done.json().data).toEqual({ integrationId: theirs.id, email: b, confirmed: true });
    expect(
      (await ctx.get(`${INTEGRATIONS}/${created.id}`, { token: owner.token })).json().data.config.pending,
    ).toEqual([b]);

    // Seven days later the link has expired; listing the address again mails a new one, which works.
    ctx.clock.advance(7 * 24 * HOUR + 1);
    // The sessions expired with the week: sign in again.
    owner = { ...owner, token: await ctx.login(owner.user.email) };
    member = { ...member, token: await ctx.login(member.email) };
    expectErrorEnvelope(await confirm(tokenB), 400, 'INVALID_TOKEN');
    const before = mail.forRecipient(b).length;
    const again = await ctx.patch(`${INTEGRATIONS}/${created.id}`, {
      token: owner.token,
      body: { config: { recipients: [a, b] } },
    });
    expect(again.json().data.config).toEqual({ recipients: [a, b], pending: [b] });
    const renewed = await mail.waitFor(
      b,
      (m) => m.subject === CONFIRM_SUBJECT && !m.decoded.includes(tokenB) && !m.decoded.includes(tokenTheirs),
    );
    expect(mail.forRecipient(b)).toHaveLength(before + 1);
    expect(mail.forRecipient(a).filter((m) => m.subject === CONFIRM_SUBJECT)).toHaveLength(1);
    expect((await confirm(MailCatcher.tokenFrom(renewed, LINK))).statusCode).toBe(200);
  });

  it('answers 400 for a malformed body or token, never 500', async () => {
    for (const body of [{}, { token: 42 }, { token: '' }, { token: 'x'.repeat(201) }]) {
      expectErrorEnvelope(await ctx.post(CONFIRM, { body }), 400, 'VALIDATION_ERROR');
    }
    for (const token of [
      'abc',
      'f'.repeat(91),
      `${owner.organization.id}${'0'.repeat(24)}${'A'.repeat(43)}`,
    ]) {
      expectErrorEnvelope(await confirm(token), 400, 'INVALID_TOKEN');
    }
  });

  it('keeps confirmed addresses on an edit and mails each new non-member once; shows addresses only', async () => {
    const [kept, added] = [uniqueEmail('kept'), uniqueEmail('added')];
    const created = await create([kept]);
    await confirm(await tokenOf(kept));
    const body = { config: { recipients: [kept, added, owner.user.email] } };
    for (let i = 0; i < 2; i++) {
      const res = await ctx.patch(`${INTEGRATIONS}/${created.id}`, { token: owner.token, body });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data.config).toEqual({
        recipients: [kept, added, owner.user.email],
        pending: [added],
      });
      expect(res.body).not.toMatch(/tokenHash|expiresAt|confirmedAt|confirmedVia/);
    }
    // A rename leaves the recipients as they are.
    await ctx.patch(`${INTEGRATIONS}/${created.id}`, { token: owner.token, body: { name: 'Renamed' } });
    const token = await tokenOf(added);
    expect(mail.forRecipient(kept)).toHaveLength(1);
    expect(mail.forRecipient(added)).toHaveLength(1);
    expect(await outboxMailTo(added)).toEqual([CONFIRM_SUBJECT]);
    expect(mail.forRecipient(owner.user.email).filter((m) => m.subject === CONFIRM_SUBJECT)).toHaveLength(0);
    const list = await ctx.get(INTEGRATIONS, { token: member.token });
    const listed = list.json().data.find((i: { id: string }) => i.id === created.id);
    expect(listed.config).toEqual({ recipients: [kept, added, owner.user.email], pending: [added] });
    expect(list.body).not.toMatch(/tokenHash|expiresAt/);
    // Stored: the token's SHA-256, never the token.
    const [row] = await ctx.db.db.select().from(integrations).where(eq(integrations.id, created.id));
    expect(JSON.stringify(row!.recipients)).toContain(sha256Hex(token));
    expect(JSON.stringify(row!.recipients)).not.toContain(token);
  });

  it('reads a list stored before the opt-in as pending: members still receive, saving it again mails the others', async () => {
    const old = uniqueEmail('legacy');
    const created = await create([member.email]);
    await ctx.db.db
      .update(integrations)
      .set({ recipients: [old, member.email] })
      .where(eq(integrations.id, created.id));
    const shown = await ctx.get(`${INTEGRATIONS}/${created.id}`, { token: owner.token });
    expect(shown.json().data.config).toEqual({
      recipients: [old, member.email],
      pending: [old, member.email],
    });
    expect((await sendTest(created.id)).json().data).toEqual({ delivered: true, sent: 1 });
    expect(mail.forRecipient(old)).toHaveLength(0);
    const saved = await ctx.patch(`${INTEGRATIONS}/${created.id}`, {
      token: owner.token,
      body: { config: { recipients: [old, member.email] } },
    });
    expect(saved.json().data.config.pending).toEqual([old]);
    await confirmation(old);
  });

  it('limits test sends to 10 per user per hour (429 RATE_LIMITED with Retry-After), per user', async () => {
    const boss = await ctx.register({ organizationName: 'Per user' });
    const admin = await ctx.addMember(boss.organization.id, 'admin');
    const { id } = await create([boss.user.email], boss.token);
    for (let i = 0; i < 10; i++) expect((await sendTest(id, boss.token)).statusCode).toBe(200);
    const res = await sendTest(id, boss.token);
    expectErrorEnvelope(res, 429, 'RATE_LIMITED');
    const retryAfter = Number(res.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    expect(res.headers['ratelimit-limit']).toBe('10');
    expect(mail.forRecipient(boss.user.email).filter((m) => m.subject === TEST_SUBJECT)).toHaveLength(10);
    // Another user of the organization has a window of their own.
    expect((await sendTest(id, admin.token)).statusCode).toBe(200);
    ctx.clock.advance(HOUR);
    expect((await sendTest(id, boss.token)).statusCode).toBe(200);
  });

  it('limits test sends to 30 per organization per hour, whoever sends them', async () => {
    const boss = await ctx.register({ organizationName: 'Per org' });
    const admins = [
      await ctx.addMember(boss.organization.id, 'admin'),
      await ctx.addMember(boss.organization.id, 'admin'),
      await ctx.addMember(boss.organization.id, 'admin'),
    ];
    const { id } = await create([boss.user.email], boss.token);
    for (const token of [boss.token, admins[0]!.token, admins[1]!.token]) {
      for (let i = 0; i < 10; i++) expect((await sendTest(id, token)).statusCode).toBe(200);
    }
    const res = await sendTest(id, admins[2]!.token);
    expectErrorEnvelope(res, 429, 'RATE_LIMITED');
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    expect(mail.forRecipient(boss.user.email).filter((m) => m.subject === TEST_SUBJECT)).toHaveLength(30);
    // Another organization is not affected.
    const other = await ctx.register({ organizationName: 'Unaffected' });
    const theirs = await create([other.user.email], other.token);
    expect((await sendTest(theirs.id, other.token)).statusCode).toBe(200);
  });

  it('limits confirmation mails to 50 per organization per hour, refusing the change before writing it', async () => {
    const boss = await ctx.register({ organizationName: 'Many outsiders' });
    const batch = () => Array.from({ length: 20 }, () => uniqueEmail('bulk'));
    await create(batch(), boss.token);
    await create(batch(), boss.token);
    const refused = await ctx.post(INTEGRATIONS, {
      token: boss.token,
      body: { type: 'email', name: 'Third', config: { recipients: batch() } },
    });
    expectErrorEnvelope(refused, 429, 'RATE_LIMITED');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect((await ctx.get(INTEGRATIONS, { token: boss.token })).json().pagination.total).toBe(2);
    // Members cost nothing: an integration of members only is still created.
    expect((await create([boss.user.email], boss.token)).config.pending).toEqual([]);
  });
});

describe('the public confirmation limiter', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await TestContext.create({ config: { authRateLimit: { max: 3, windowMs: 60_000 } } });
  });
  afterAll(async () => ctx?.close());

  it('limits confirmations per IP address like the auth routes (429 RATE_LIMIT_EXCEEDED)', async () => {
    for (let i = 0; i < 3; i++) {
      expectErrorEnvelope(await ctx.post(CONFIRM, { body: { token: 'x'.repeat(91) } }), 400, 'INVALID_TOKEN');
    }
    const res = await ctx.post(CONFIRM, { body: { token: 'x'.repeat(91) } });
    expectErrorEnvelope(res, 429, 'RATE_LIMIT_EXCEEDED');
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    ctx.clock.advance(60_000);
    expectErrorEnvelope(await ctx.post(CONFIRM, { body: { token: 'x'.repeat(91) } }), 400, 'INVALID_TOKEN');
  });
});
