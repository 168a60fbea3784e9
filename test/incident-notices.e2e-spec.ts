import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JobScheduler, newId } from '#platform';
import { incidents } from '../libs/compliance/src/incidents/incident.schema.js';
import { type Registered, replicaContext, TestContext } from './support/app.js';
import { type CaughtMail, MailCatcher } from './support/mail-catcher.js';

const INCIDENTS = '/api/v1/incidents';
const START = '2026-03-01T10:00:00.000Z';
const HOUR = 3_600_000;
const APP_URL = 'http://app.gov.test';

interface Notice {
  to: string;
  subject: string;
  template: string;
}

const dueSoonSubject = (title: string) => `Incident "${title}" must be reported within 24 hours`;
const overdueSubject = (title: string) => `Incident "${title}" is overdue for reporting`;

/** The decoded Subject header (nodemailer writes quotes as RFC 2047 encoded words, folded over lines). */
function subjectOf(mail: CaughtMail): string {
  const header = mail.raw.split(/\r?\n\r?\n/)[0]!.replace(/\r?\n[ \t]+/g, ' ');
  const value = /^Subject: (.*)$/im.exec(header)?.[1] ?? '';
  return value
    .replace(/=\?UTF-8\?([QB])\?([^?]*)\?=(?:\s+(?==\?))?/gi, (_m, encoding: string, text: string) =>
      encoding.toUpperCase() === 'B'
        ? Buffer.from(text, 'base64').toString('utf8')
        : Buffer.from(
            text
              .replace(/_/g, ' ')
              .replace(/=([0-9A-F]{2})/gi, (_x, hex: string) =>
                String.fromCharCode(Number.parseInt(hex, 16)),
              ),
            'latin1',
          ).toString('utf8'),
    )
    .trim();
}

async function until<T>(fn: () => T | undefined | Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('incident deadline notices (article 73)', () => {
  let ctx: TestContext;
  let mail: MailCatcher;

  beforeAll(async () => {
    mail = await MailCatcher.start();
    // WORKERS=off: the test runs the job itself.
    ctx = await TestContext.create({ now: START, config: { smtpUrl: mail.url, workers: false } });
  });
  afterAll(async () => {
    await ctx?.close();
    await mail?.stop();
  });

  /** The incident notices written to the outbox (committed, whether delivered yet or not), oldest first. */
  async function notices(to?: string): Promise<Notice[]> {
    const result = (await ctx.db.db.execute(
      sql`select payload->>'to' as "to", payload->>'subject' as subject, payload->>'template' as template
          from outbox_messages
          where topic = 'mail.send' and payload->>'template' like 'incident-%'
            and (${to ?? null}::text is null or payload->>'to' = ${to ?? null}::text)
          order by created_at, id`,
    )) as unknown as { rows: Notice[] };
    return result.rows;
  }

  const runJob = (c: TestContext = ctx) => c.app.get(JobScheduler).runNow('incident-notices');

  async function createIncident(
    owner: Registered,
    body: { title: string; category: string; awareAt: string },
  ): Promise<{ id: string; deadline: string }> {
    const res = await ctx.post(INCIDENTS, { token: owner.token, body });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().data;
  }

  it('tells each owner and admin once when the deadline is 24 hours away, and once when it has passed', async () => {
    const owner = await ctx.register({ organizationName: 'Notified' });
    const admin = await ctx.addMember(owner.organization.id, 'admin');
    const member = await ctx.addMember(owner.organization.id, 'member');
    const viewer = await ctx.addMember(owner.organization.id, 'viewer');
    const told = [owner.user.email, admin.email];
    const notTold = [member.email, viewer.email];
    const title = 'Leak A';
    const incident = await createIncident(owner, {
      title,
      category: 'widespread_infringement',
      awareAt: ctx.clock.now().toISOString(),
    });
    const deadline = Date.parse(incident.deadline);
    expect(deadline - ctx.clock.nowMs()).toBe(48 * HOUR);

    await runJob();
    expect(await notices(owner.user.email)).toEqual([]);
    ctx.clock.set(new Date(deadline - 25 * HOUR));
    await runJob();
    for (const to of [...told, ...notTold]) expect(await notices(to)).toEqual([]);

    ctx.clock.set(new Date(deadline - 23 * HOUR));
    await runJob();
    for (const to of told) {
      expect(await notices(to)).toEqual([
        { to, subject: dueSoonSubject(title), template: 'incident-due-soon' },
      ]);
      const caught = await mail.waitFor(to, (m) => subjectOf(m) === dueSoonSubject(title));
      expect(caught.decoded).toContain(`${APP_URL}/incidents/${incident.id}`);
      expect(caught.decoded).toContain(incident.deadline);
    }
    for (const to of notTold) expect(await notices(to)).toEqual([]);

    await runJob();
    ctx.clock.advance(22 * HOUR); // an hour before the deadline: still nothing new
    await runJob();
    for (const to of told) expect(await notices(to)).toHaveLength(1);

    ctx.clock.set(new Date(deadline + 1000));
    await runJob();
    for (const to of told) {
      expect((await notices(to)).map((n) => n.subject)).toEqual([
        dueSoonSubject(title),
        overdueSubject(title),
      ]);
      const caught = await mail.waitFor(to, (m) => subjectOf(m) === overdueSubject(title));
      expect(caught.decoded).toContain(`${APP_URL}/incidents/${incident.id}`);
    }
    await runJob();
    ctx.clock.advance(48 * HOUR);
    await runJob();
    for (const to of told) expect(await notices(to)).toHaveLength(2);
    for (const to of notTold) expect(await notices(to)).toEqual([]);
    await new Promise((r) => setTimeout(r, 200));
    for (const to of told) expect(mail.forRecipient(to)).toHaveLength(2);
    for (const to of notTold) expect(mail.forRecipient(to)).toHaveLength(0);
  });

  it('sends nothing for a reported or closed incident', async () => {
    const owner = await ctx.register({ organizationName: 'Reported' });
    const awareAt = ctx.clock.now().toISOString();
    const reported = await createIncident(owner, { title: 'Reported one', category: 'death', awareAt });
    const closed = await createIncident(owner, { title: 'Closed one', category: 'death', awareAt });
    ctx.clock.advance(HOUR);
    const a = await ctx.patch(`${INCIDENTS}/${reported.id}`, {
      token: owner.token,
      body: { status: 'reported' },
    });
    const b = await ctx.patch(`${INCIDENTS}/${closed.id}`, {
      token: owner.token,
      body: { status: 'closed' },
    });
    expect([a.statusCode, b.statusCode]).toEqual([200, 200]);
    ctx.clock.set(new Date(Date.parse(reported.deadline) - 12 * HOUR));
    await runJob();
    ctx.clock.set(new Date(Date.parse(reported.deadline) + HOUR));
    await runJob();
    expect(await notices(owner.user.email)).toEqual([]);
  });

  it('sends only the overdue notice for an incident recorded after its deadline', async () => {
    const owner = await ctx.register({ organizationName: 'Late' });
    const title = 'Late one';
    const incident = await createIncident(owner, {
      title,
      category: 'critical_infrastructure',
      awareAt: new Date(ctx.clock.nowMs() - 3 * 24 * HOUR).toISOString(),
    });
    expect(Date.parse(incident.deadline)).toBeLessThan(ctx.clock.nowMs());
    await runJob();
    await runJob();
    ctx.clock.advance(HOUR);
    await runJob();
    expect(await notices(owner.user.email)).toEqual([
      { to: owner.user.email, subject: overdueSubject(title), template: 'incident-overdue' },
    ]);
  });

  it('tells only the owners and admins of the incident’s own organization', async () => {
    const mine = await ctx.register({ organizationName: 'Mine' });
    const theirs = await ctx.register({ organizationName: 'Theirs' });
    const theirAdmin = await ctx.addMember(theirs.organization.id, 'admin');
    const title = 'Mine only';
    await createIncident(mine, {
      title,
      category: 'widespread_infringement',
      awareAt: new Date(ctx.clock.nowMs() - 47 * HOUR).toISOString(),
    });
    await runJob();
    expect(await notices(mine.user.email)).toEqual([
      { to: mine.user.email, subject: dueSoonSubject(title), template: 'incident-due-soon' },
    ]);
    expect(await notices(theirs.user.email)).toEqual([]);
    expect(await notices(theirAdmin.email)).toEqual([]);
    const everyone = (await notices()).filter((n) => n.subject.includes(`"${title}"`));
    expect(everyone.map((n) => n.to)).toEqual([mine.user.email]);
  });

  it('sends each notice once when two replicas run the job at the same time, in batches', async () => {
    const replica = await replicaContext(ctx);
    try {
      const owner = await ctx.register({ organizationName: 'Busy' });
      const admin = await ctx.addMember(owner.organization.id, 'admin');
      // More than one claim's batch (100), so both replicas loop and race on the rest.
      const count = 110;
      const now = ctx.clock.now();
      const awareAt = new Date(now.getTime() - 47 * HOUR);
      await ctx.db.db.insert(incidents).values(
        Array.from({ length: count }, (_, n) => ({
          id: newId(now.getTime()),
          organizationId: owner.organization.id,
          title: `Busy ${n}`,
          category: 'widespread_infringement' as const,
          awareAt,
          deadlineAt: new Date(awareAt.getTime() + 48 * HOUR),
          status: 'open' as const,
          createdAt: now,
          updatedAt: now,
        })),
      );
      replica.clock.set(ctx.clock.now());
      await Promise.all([runJob(ctx), runJob(replica)]);
      for (const to of [owner.user.email, admin.email]) {
        const sent = await notices(to);
        expect(sent).toHaveLength(count);
        expect(new Set(sent.map((n) => n.subject)).size).toBe(count);
        expect(sent.every((n) => n.template === 'incident-due-soon')).toBe(true);
      }

      ctx.clock.advance(2 * HOUR);
      replica.clock.set(ctx.clock.now());
      await Promise.all([runJob(replica), runJob(ctx)]);
      await Promise.all([runJob(replica), runJob(ctx)]);
      for (const to of [owner.user.email, admin.email]) {
        const sent = await notices(to);
        expect(sent).toHaveLength(2 * count);
        expect(sent.filter((n) => n.template === 'incident-overdue')).toHaveLength(count);
        expect(new Set(sent.map((n) => n.subject)).size).toBe(2 * count);
      }
      // Every message is delivered once (the replicas deliver what they claimed, after their commits).
      await until(() => (mail.forRecipient(admin.email).length >= 2 * count ? true : undefined));
      await until(() => (mail.forRecipient(owner.user.email).length >= 2 * count ? true : undefined));
      await new Promise((r) => setTimeout(r, 200));
      expect(mail.forRecipient(admin.email)).toHaveLength(2 * count);
      expect(mail.forRecipient(owner.user.email)).toHaveLength(2 * count);
    } finally {
      await replica.close();
    }
  });
});
