import { GovernanceError, type GovernanceClient } from '@governance/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_PASSWORD, uniqueEmail } from '../support/app.js';
import { MailCatcher } from '../support/mail-catcher.js';
import { STEP_MS, totpAt } from '../support/mfa-suite.js';
import { ListeningService, signUp } from './harness.js';

const DAY = 86_400_000;

describe('client: sign-up, login with a TOTP second factor, session refresh', () => {
  let service: ListeningService;
  let mail: MailCatcher;

  beforeAll(async () => {
    mail = await MailCatcher.start();
    // Fifteen seconds into a TOTP step, as the MFA suites start.
    service = await ListeningService.start({
      now: '2026-05-04T09:00:15.000Z',
      config: { smtpUrl: mail.url },
    });
  });
  afterAll(async () => {
    await service?.close();
    await mail?.stop();
  });

  const code = (secret: string) => totpAt(secret, service.ctx.clock.nowMs());

  it('signs up through the e-mailed link, turns TOTP on, and logs in with password then code', async () => {
    const anonymous = service.client();
    const email = uniqueEmail('signup');
    const requested = await anonymous.post('/api/v1/auth/request-signup', {
      body: { name: 'Grace', email, password: TEST_PASSWORD, organizationName: 'Compilers' },
    });
    expect(requested).toEqual({ message: expect.any(String) });
    const link = await mail.waitFor(email, (m) => m.subject === 'Confirm your e-mail address');
    const completed = await anonymous.post('/api/v1/auth/complete-signup', {
      body: { token: MailCatcher.tokenFrom(link, '/verify-email/') },
    });
    expect(completed.user).toMatchObject({ email, name: 'Grace' });
    expect(completed.organization).toMatchObject({ name: 'Compilers' });

    const session = service.client({ credentials: { jwt: completed.token } });
    const { secret, otpauthUrl } = await session.post('/api/v1/auth/mfa/setup');
    expect(otpauthUrl).toMatch(/^otpauth:\/\/totp\//);
    const { backupCodes } = await session.post('/api/v1/auth/mfa/enable', { body: { code: code(secret) } });
    expect(backupCodes).toHaveLength(10);
    // A code is accepted once in its step: the next login uses the next step's.
    service.ctx.clock.advance(STEP_MS);

    const first = await anonymous.post('/api/v1/auth/login', { body: { email, password: TEST_PASSWORD } });
    if (!('mfaRequired' in first)) throw new Error('expected an MFA challenge');
    expect(first).toEqual({ mfaRequired: true, tempToken: expect.any(String) });
    const wrong = await anonymous
      .post('/api/v1/auth/mfa/login', { body: { tempToken: first.tempToken, code: '000000' } })
      .catch((e: unknown) => e);
    expect(wrong).toMatchObject({ status: 401, code: 'INVALID_MFA_CODE' });

    const second = await anonymous.post('/api/v1/auth/mfa/login', {
      body: { tempToken: first.tempToken, code: code(secret) },
    });
    const signedIn = anonymous.withCredentials({ jwt: second.token });
    const me = await signedIn.get('/api/v1/auth/me');
    expect(me.user).toMatchObject({ email, mfaEnabled: true });
    expect(await signedIn.get('/api/v1/auth/security-settings')).toMatchObject({
      mfaEnabled: true,
      backupCodesRemaining: 10,
    });
  });

  it('refreshes an expired session once and sends the request again with the new token', async () => {
    const user = await signUp(service, 'Refreshers');
    let refreshes = 0;
    const client = service.client({
      credentials: {
        jwt: user.token,
        refresh: async () => {
          refreshes += 1;
          const login = await service.client().post('/api/v1/auth/login', {
            body: { email: user.email, password: TEST_PASSWORD },
          });
          return 'token' in login ? login.token : null;
        },
      },
    });
    expect((await client.get('/api/v1/auth/me')).user.email).toBe(user.email);
    // Sessions last 7 days by default.
    service.ctx.clock.advance(8 * DAY);
    const expired = await user.client.get('/api/v1/auth/me').catch((e: unknown) => e);
    expect(expired).toBeInstanceOf(GovernanceError);
    expect(expired).toMatchObject({ status: 401, code: 'TOKEN_EXPIRED' });

    const [me, agents] = await Promise.all([
      client.get('/api/v1/auth/me'),
      client.post('/api/v1/agents', { body: { name: 'After the refresh' } }),
    ]);
    expect(me.user.email).toBe(user.email);
    expect(agents.name).toBe('After the refresh');
    expect(refreshes).toBe(1);
    expect(client.token).not.toBe(user.token);
  });

  it('a refresh hook that renews through the same client ends with the 401 when the token cannot be renewed', async () => {
    const user = await signUp(service, 'Self-refreshers');
    let refreshes = 0;
    const client: GovernanceClient = service.client({
      credentials: {
        jwt: user.token,
        // What the documentation advises against: the same client. Its /auth/refresh is never itself refreshed, so
        // the expired token's 401 there ends the hook, and the request, instead of waiting on itself.
        refresh: async () => {
          refreshes += 1;
          return (await client.post('/api/v1/auth/refresh')).token;
        },
      },
    });
    expect((await client.get('/api/v1/auth/me')).user.email).toBe(user.email);
    service.ctx.clock.advance(8 * DAY);
    const error = await Promise.race([
      client.get('/api/v1/auth/me'),
      new Promise((_resolve, reject) => setTimeout(() => reject(new Error('the request hung')), 5000)),
    ]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GovernanceError);
    expect(error).toMatchObject({ status: 401, code: 'TOKEN_EXPIRED' });
    expect(refreshes).toBe(1);

    // Through a client of its own, the same hook renews (a token still valid: refreshed before it expires).
    const fresh = await signUp(service, 'Refreshers, properly');
    const renewer = service.client({ credentials: { jwt: fresh.token } });
    const renewing = service.client({
      credentials: {
        jwt: 'not-a-token',
        refresh: async () => (await renewer.post('/api/v1/auth/refresh')).token,
      },
    });
    expect((await renewing.get('/api/v1/auth/me')).user.email).toBe(fresh.email);
  });

  it('a wrong password is a typed INVALID_CREDENTIALS error with the request id', async () => {
    const user = await signUp(service, 'Forgetful');
    const error = await service
      .client()
      .post('/api/v1/auth/login', { body: { email: user.email, password: 'Wrong-passw0rd' } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GovernanceError);
    expect(error).toMatchObject({ status: 401, code: 'INVALID_CREDENTIALS', requestId: expect.any(String) });
  });
});
