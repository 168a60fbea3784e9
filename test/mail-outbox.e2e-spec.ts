import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildProgram } from '../apps/cli/src/cli.js';
import { MailService } from '#platform';
import { TestContext } from './support/app.js';
import { MailCatcher } from './support/mail-catcher.js';

interface OutboxRow {
  id: string;
  to: string;
  status: string;
  attempts: number;
  last_error: string | null;
  body_encrypted: string | null;
}

async function outboxFor(ctx: TestContext, to: string): Promise<OutboxRow[]> {
  const result = (await ctx.db.db.execute(
    sql`select id, payload->>'to' as "to", status, attempts, last_error, sealed as body_encrypted
        from outbox_messages where topic = 'mail.send' and payload->>'to' = ${to} order by created_at`,
  )) as unknown as {
    rows: OutboxRow[];
  };
  return result.rows;
}

async function until<T>(fn: () => Promise<T | undefined>, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('mail outbox with SMTP', () => {
  let ctx: TestContext;
  let mail: MailCatcher;
  beforeAll(async () => {
    mail = await MailCatcher.start();
    // WORKERS=off: the periodic retry pass is driven by the test through retryDue().
    ctx = await TestContext.create({ config: { smtpUrl: mail.url, workers: false } });
  });
  afterAll(async () => {
    await ctx?.close();
    await mail?.stop();
  });

  it('keeps a message the SMTP server refused, retries it after the backoff, and clears its body once sent', async () => {
    const user = await ctx.register();
    mail.refuse = true;
    await ctx.post('/api/v1/auth/forgot-password', { body: { email: user.user.email } });
    const failed = await until(async () => {
      const [row] = await outboxFor(ctx, user.user.email);
      return row?.last_error ? row : undefined;
    });
    expect(failed.status).toBe('pending');
    expect(failed.body_encrypted).toMatch(/^v1\./);
    expect(failed.body_encrypted).not.toContain('reset-password');

    mail.refuse = false;
    const service = ctx.app.get(MailService);
    expect(await service.retryDue()).toBe(0); // not due before the backoff
    ctx.clock.advance(31_000);
    expect(await service.retryDue()).toBe(1);
    const message = await mail.waitFor(user.user.email, (m) => m.subject === 'Reset your password');
    expect(MailCatcher.tokenFrom(message, '/reset-password/')).toHaveLength(43);
    const [sent] = await outboxFor(ctx, user.user.email);
    expect(sent).toMatchObject({ status: 'sent', attempts: 2, body_encrypted: null });
  });

  it('delivers each message once even when two retry passes run together', async () => {
    const user = await ctx.register();
    mail.refuse = true;
    await ctx.post('/api/v1/auth/magic-link', { body: { email: user.user.email } });
    await until(async () => ((await outboxFor(ctx, user.user.email))[0]?.last_error ? true : undefined));
    mail.refuse = false;
    ctx.clock.advance(31_000);
    const service = ctx.app.get(MailService);
    await Promise.all([service.retryDue(), service.retryDue(), service.retryDue()]);
    await mail.waitFor(user.user.email);
    await new Promise((r) => setTimeout(r, 200));
    expect(mail.forRecipient(user.user.email)).toHaveLength(1);
  });
});

describe('mail outbox without SMTP', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await TestContext.create({ config: { smtpUrl: undefined } });
  });
  afterAll(async () => ctx?.close());

  it('stores the message encrypted, and the operator CLI shows its text', async () => {
    const user = await ctx.register();
    await ctx.post('/api/v1/auth/magic-link', { body: { email: user.user.email } });
    const row = await until(async () => (await outboxFor(ctx, user.user.email))[0]);
    expect(row.status).toBe('stored');
    expect(row.body_encrypted).not.toContain('magic-link');

    const printed: unknown[] = [];
    await buildProgram(
      (fn) => fn(ctx.app),
      (v) => printed.push(v),
    ).parseAsync(['node', 'cli', 'mail:outbox', '--limit', '5']);
    const listed = (printed[0] as { to: string; status: string; text: string }[]).find(
      (m) => m.to === user.user.email,
    );
    expect(listed).toMatchObject({
      status: 'stored',
      text: expect.stringMatching(/\/magic-link\/[A-Za-z0-9_-]{43}/),
    });
  });
});
