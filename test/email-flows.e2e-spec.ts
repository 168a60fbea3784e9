import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_PASSWORD, TestContext, uniqueEmail } from './support/app.js';
import { MailCatcher } from './support/mail-catcher.js';

const HOUR = 3600 * 1000;

describe('e-mail flows: sign-up, password reset and change, magic link', () => {
  let ctx: TestContext;
  let mail: MailCatcher;
  beforeAll(async () => {
    mail = await MailCatcher.start();
    ctx = await TestContext.create({ config: { smtpUrl: mail.url } });
  });
  afterAll(async () => {
    await ctx?.close();
    await mail?.stop();
  });

  const signupBody = (email: string) => ({
    name: 'Grace',
    email,
    password: TEST_PASSWORD,
    organizationName: 'Compilers',
  });

  describe('request-signup and complete-signup', () => {
    it('sends a confirmation link, returns no JWT, and the token creates the account once', async () => {
      const email = uniqueEmail('signup');
      const res = await ctx.post('/api/v1/auth/request-signup', { body: signupBody(email) });
      expect(res.statusCode).toBe(202);
      expect(res.json().data).toEqual({ message: expect.any(String) });
      expect(res.body).not.toMatch(/token/i);

      const message = await mail.waitFor(email, (m) => m.subject === 'Confirm your e-mail address');
      const token = MailCatcher.tokenFrom(message, '/verify-email/');
      expect(message.decoded).toContain(`http://app.gov.test/verify-email/${token}`);
      // The account does not exist before confirmation.
      expect(
        (await ctx.post('/api/v1/auth/login', { body: { email, password: TEST_PASSWORD } })).statusCode,
      ).toBe(401);

      const done = await ctx.post('/api/v1/auth/complete-signup', { body: { token } });
      expect(done.statusCode).toBe(201);
      const data = done.json().data;
      expect(data.user).toMatchObject({ email, name: 'Grace' });
      expect(data.organization).toMatchObject({ name: 'Compilers', plan: 'sandbox' });
      expect((await ctx.get('/api/v1/auth/me', { token: data.token })).json().data.role).toBe('owner');

      const again = await ctx.post('/api/v1/auth/complete-signup', { body: { token } });
      expect(again.statusCode).toBe(400);
      expect(again.json().code).toBe('INVALID_TOKEN');
      const audit = await ctx.get('/api/v1/audit', {
        token: data.token,
        query: { eventType: 'auth.register' },
      });
      expect(audit.json().data[0].metadata).toMatchObject({ method: 'email_verification' });
    });

    it('answers an already registered address with the same 202 body, and mails a note without a token', async () => {
      const existing = await ctx.register();
      const fresh = await ctx.post('/api/v1/auth/request-signup', { body: signupBody(uniqueEmail('fresh')) });
      const taken = await ctx.post('/api/v1/auth/request-signup', { body: signupBody(existing.user.email) });
      expect(taken.statusCode).toBe(202);
      expect(taken.body).toBe(fresh.body);
      const note = await mail.waitFor(
        existing.user.email,
        (m) => m.subject === 'You already have an account',
      );
      expect(note.decoded).not.toMatch(/verify-email\//);
    });

    it('refuses an expired confirmation token (after 24 hours) and an unknown one with 400 INVALID_TOKEN', async () => {
      const email = uniqueEmail('late');
      await ctx.post('/api/v1/auth/request-signup', { body: signupBody(email) });
      const token = MailCatcher.tokenFrom(await mail.waitFor(email), '/verify-email/');
      ctx.clock.advance(24 * HOUR + 1000);
      for (const candidate of [token, 'x'.repeat(43)]) {
        const res = await ctx.post('/api/v1/auth/complete-signup', { body: { token: candidate } });
        expect(res.statusCode).toBe(400);
        expect(res.json().code).toBe('INVALID_TOKEN');
      }
    });

    it('refuses a weak password before sending anything', async () => {
      const email = uniqueEmail('weak');
      const res = await ctx.post('/api/v1/auth/request-signup', {
        body: { ...signupBody(email), password: 'weakpass' },
      });
      expect(res.statusCode).toBe(400);
      expect(res.json().code).toBe('VALIDATION_ERROR');
      await new Promise((r) => setTimeout(r, 200));
      expect(mail.forRecipient(email)).toHaveLength(0);
    });
  });

  describe('forgot-password and reset-password', () => {
    it('answers 200 with the same body for known and unknown addresses, and mails only the known one', async () => {
      const user = await ctx.register();
      const unknownEmail = uniqueEmail('ghost');
      const known = await ctx.post('/api/v1/auth/forgot-password', { body: { email: user.user.email } });
      const unknown = await ctx.post('/api/v1/auth/forgot-password', { body: { email: unknownEmail } });
      expect(known.statusCode).toBe(200);
      expect(unknown.statusCode).toBe(200);
      expect(unknown.body).toBe(known.body);
      await mail.waitFor(user.user.email, (m) => m.subject === 'Reset your password');
      await new Promise((r) => setTimeout(r, 200));
      expect(mail.forRecipient(unknownEmail)).toHaveLength(0);
    });

    it('resets the password once with the token, revokes every session, and refuses the token a second time', async () => {
      const user = await ctx.register();
      const second = await ctx.login(user.user.email);
      await ctx.post('/api/v1/auth/forgot-password', { body: { email: user.user.email } });
      const token = MailCatcher.tokenFrom(
        await mail.waitFor(user.user.email, (m) => m.subject === 'Reset your password'),
        '/reset-password/',
      );

      const weak = await ctx.post('/api/v1/auth/reset-password', { body: { token, password: 'short' } });
      expect(weak.statusCode).toBe(400);
      expect(weak.json().code).toBe('VALIDATION_ERROR');

      const res = await ctx.post('/api/v1/auth/reset-password', {
        body: { token, password: 'Brand-New-Pass-7' },
      });
      expect(res.statusCode).toBe(200);
      for (const old of [user.token, second]) {
        const me = await ctx.get('/api/v1/auth/me', { token: old });
        expect(me.statusCode).toBe(401);
        expect(me.json().code).toBe('SESSION_REVOKED');
      }
      expect(
        (await ctx.post('/api/v1/auth/login', { body: { email: user.user.email, password: TEST_PASSWORD } }))
          .statusCode,
      ).toBe(401);
      const fresh = await ctx.login(user.user.email, 'Brand-New-Pass-7');
      const reuse = await ctx.post('/api/v1/auth/reset-password', {
        body: { token, password: 'Another-Pass-88' },
      });
      expect(reuse.statusCode).toBe(400);
      expect(reuse.json().code).toBe('INVALID_TOKEN');
      const audit = await ctx.get('/api/v1/audit', {
        token: fresh,
        query: { eventType: 'auth.password_reset' },
      });
      expect(audit.json().data).toHaveLength(1);
      expect(audit.json().data[0].metadata).toEqual({ sessionsRevoked: 2 });
    });

    it('refuses a reset token after one hour, and an older link once a newer one was requested', async () => {
      const user = await ctx.register();
      await ctx.post('/api/v1/auth/forgot-password', { body: { email: user.user.email } });
      const first = MailCatcher.tokenFrom(
        await mail.waitFor(user.user.email, (m) => m.subject === 'Reset your password'),
        '/reset-password/',
      );
      await ctx.post('/api/v1/auth/forgot-password', { body: { email: user.user.email } });
      await mail.waitFor(
        user.user.email,
        (m) => m.subject === 'Reset your password' && !m.decoded.includes(first),
      );
      const stale = await ctx.post('/api/v1/auth/reset-password', {
        body: { token: first, password: 'Brand-New-Pass-7' },
      });
      expect(stale.json().code).toBe('INVALID_TOKEN');

      const later = await ctx.register();
      await ctx.post('/api/v1/auth/forgot-password', { body: { email: later.user.email } });
      const token = MailCatcher.tokenFrom(await mail.waitFor(later.user.email), '/reset-password/');
      ctx.clock.advance(HOUR + 1000);
      const expired = await ctx.post('/api/v1/auth/reset-password', {
        body: { token, password: 'Brand-New-Pass-7' },
      });
      expect(expired.statusCode).toBe(400);
      expect(expired.json().code).toBe('INVALID_TOKEN');
    });
  });

  describe('change-password', () => {
    it('needs the current password, keeps the caller’s session and revokes the others', async () => {
      const user = await ctx.register();
      const other = await ctx.login(user.user.email);
      const wrong = await ctx.post('/api/v1/auth/change-password', {
        token: user.token,
        body: { currentPassword: 'Not-The-Pass-1', newPassword: 'Changed-Pass-42' },
      });
      expect(wrong.statusCode).toBe(400);
      expect(wrong.json().details).toEqual([{ field: 'currentPassword', message: expect.any(String) }]);

      const same = await ctx.post('/api/v1/auth/change-password', {
        token: user.token,
        body: { currentPassword: TEST_PASSWORD, newPassword: TEST_PASSWORD },
      });
      expect(same.statusCode).toBe(400);

      const ok = await ctx.post('/api/v1/auth/change-password', {
        token: user.token,
        body: { currentPassword: TEST_PASSWORD, newPassword: 'Changed-Pass-42' },
      });
      expect(ok.statusCode).toBe(200);
      expect((await ctx.get('/api/v1/auth/me', { token: user.token })).statusCode).toBe(200);
      expect((await ctx.get('/api/v1/auth/me', { token: other })).json().code).toBe('SESSION_REVOKED');
      expect(await ctx.login(user.user.email, 'Changed-Pass-42')).toEqual(expect.any(String));
    });
  });

  describe('magic links', () => {
    it('logs in once with the link token and writes auth.login with method magic_link', async () => {
      const user = await ctx.register();
      const res = await ctx.post('/api/v1/auth/magic-link', { body: { email: user.user.email } });
      expect(res.statusCode).toBe(200);
      const token = MailCatcher.tokenFrom(
        await mail.waitFor(user.user.email, (m) => m.subject === 'Your sign-in link'),
        '/magic-link/',
      );
      const login = await ctx.post('/api/v1/auth/magic-link/verify', { body: { token } });
      expect(login.statusCode).toBe(200);
      expect(login.json().data.user.id).toBe(user.user.id);
      expect((await ctx.get('/api/v1/auth/me', { token: login.json().data.token })).statusCode).toBe(200);
      const again = await ctx.post('/api/v1/auth/magic-link/verify', { body: { token } });
      expect(again.statusCode).toBe(400);
      expect(again.json().code).toBe('INVALID_TOKEN');
      const session = login.json().data.token as string;
      const audit = await ctx.get('/api/v1/audit', { token: session, query: { eventType: 'auth.login' } });
      expect(audit.json().data[0].metadata).toEqual({ method: 'magic_link' });
      // The link was the registered address's first proof: it claimed the account, so the session
      // and the password the registration left, which anyone could have typed, no longer work.
      expect((await ctx.get('/api/v1/auth/me', { token: user.token })).json().code).toBe('SESSION_REVOKED');
      const password = await ctx.post('/api/v1/auth/login', {
        body: { email: user.user.email, password: user.password },
      });
      expect(password.json().code).toBe('INVALID_CREDENTIALS');
    });

    it('leaves a proven account as it is: a second link keeps the sessions of the first', async () => {
      const user = await ctx.register();
      const signIn = async (): Promise<string> => {
        const before = mail.forRecipient(user.user.email).length;
        await ctx.post('/api/v1/auth/magic-link', { body: { email: user.user.email } });
        const link = await mail.waitFor(
          user.user.email,
          (m) => m.subject === 'Your sign-in link' && mail.forRecipient(user.user.email).indexOf(m) >= before,
        );
        const res = await ctx.post('/api/v1/auth/magic-link/verify', {
          body: { token: MailCatcher.tokenFrom(link, '/magic-link/') },
        });
        expect(res.statusCode, res.body).toBe(200);
        return res.json().data.token as string;
      };
      const first = await signIn();
      await signIn();
      expect((await ctx.get('/api/v1/auth/me', { token: first })).statusCode).toBe(200);
    });

    it('answers unknown addresses identically and refuses a link after 15 minutes', async () => {
      const user = await ctx.register();
      const known = await ctx.post('/api/v1/auth/magic-link', { body: { email: user.user.email } });
      const unknown = await ctx.post('/api/v1/auth/magic-link', { body: { email: uniqueEmail('nobody') } });
      expect(unknown.body).toBe(known.body);
      const token = MailCatcher.tokenFrom(
        await mail.waitFor(user.user.email, (m) => m.subject === 'Your sign-in link'),
        '/magic-link/',
      );
      ctx.clock.advance(15 * 60 * 1000 + 1);
      const res = await ctx.post('/api/v1/auth/magic-link/verify', { body: { token } });
      expect(res.statusCode).toBe(400);
      expect(res.json().code).toBe('INVALID_TOKEN');
    });
  });

  describe('placeholders', () => {
    it.each([
      ['POST', '/api/v1/auth/passkeys/registration/options'],
      ['POST', '/api/v1/auth/passkeys/authentication/verify'],
      ['DELETE', '/api/v1/auth/passkeys/abc'],
      ['DELETE', '/api/v1/auth/trusted-devices/device-1'],
      ['POST', '/api/v1/auth/account/unlock-request'],
      ['POST', '/api/v1/auth/password-history/check'],
      ['POST', '/api/v1/auth/verify-email'],
      ['POST', '/api/v1/auth/resend-verification'],
    ])('%s %s answers 200 {available: false, message}', async (method, url) => {
      const res = await ctx.request(method, url);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ success: true, data: { available: false, message: expect.any(String) } });
    });
  });
});
