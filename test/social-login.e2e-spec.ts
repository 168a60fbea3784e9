import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Registered, TestContext } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';
import { auditEntriesOf } from './support/audit-entries.js';
import { cookieValue as valueOf, setCookies } from './support/cookies.js';
import { AUTH, mfaHelpers } from './support/mfa-suite.js';
import { LocalOAuthProvider, type SocialUser } from './support/oauth-provider.js';
import { collectHandOff } from './support/sign-in.js';

describe('social login', () => {
  let ctx: TestContext;
  let provider: LocalOAuthProvider;
  let appUrl: string;
  const { setup, code, mfaLogin } = mfaHelpers(() => ctx);

  /** The browser's trip: start, the provider's redirect back, and the callback with the state cookie. */
  async function signIn(name: string, user: SocialUser, context = ctx) {
    provider.next = user;
    const started = await context.get(`/api/v1/auth/${name}`);
    expect(started.statusCode, started.body).toBe(302);
    const stateCookie = setCookies(started).get('svc_oauth_state')!;
    expect(stateCookie).toMatch(/HttpOnly/);
    const back = await fetch(started.headers.location as string, { redirect: 'manual' });
    const returned = new URL(back.headers.get('location')!);
    const cookie = `svc_oauth_state=${encodeURIComponent(valueOf(stateCookie)!)}`;
    const res = await context.request('GET', `${returned.pathname}${returned.search}`, {
      headers: { cookie },
    });
    return { res, returned, cookie, started };
  }
  const failed = (res: LightMyRequestResponse) => {
    expect(res.statusCode, res.body).toBe(302);
    expect(res.headers.location).toBe(`${appUrl}/login?error=oauth_failed`);
    expect(setCookies(res).has('svc_oauth_token')).toBe(false);
  };
  /** The session the callback left in its cookie, collected as the dashboard does. */
  const collect = (res: LightMyRequestResponse) => collectHandOff(ctx, res);
  const me = async (token: string) => (await ctx.get('/api/v1/auth/me', { token })).json().data;

  beforeAll(async () => {
    provider = await LocalOAuthProvider.start();
    const oauthProviders = {
      github: provider.settings('github'),
      google: provider.settings('google'),
      microsoft: provider.settings('microsoft'),
    };
    ctx = await TestContext.create({ config: { oauthProviders } });
    appUrl = ctx.config.appUrl;
  });
  afterAll(async () => {
    await ctx?.close();
    await provider?.close();
  });

  it('signs up with GitHub’s primary verified address, hands the session over by cookie, and audits the login', async () => {
    const { res, started } = await signIn('github', {
      userinfo: { login: 'octo', name: 'Octo Cat' },
      emails: [
        { email: 'old@example.com', primary: false, verified: true },
        { email: 'Octo@Example.com', primary: true, verified: true },
      ],
    });
    const asked = provider.authorizations.at(-1)!;
    expect(asked.searchParams.get('scope')).toBe('read:user user:email');
    expect(asked.searchParams.get('code_challenge_method')).toBe('S256');
    expect(started.headers.location).not.toMatch(/secret/);
    expect(res.headers.location).not.toMatch(/token|eyJ/);
    const cookie = setCookies(res).get('svc_oauth_token')!;
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/Max-Age=604800/);
    expect(cookie).toMatch(/SameSite=Lax/);
    const token = await collect(res);
    const data = await me(token);
    expect(data.user).toMatchObject({ email: 'octo@example.com', name: 'Octo Cat' });
    expect(data.role).toBe('owner');
    const organizationId = data.organization.id as string;
    const [register] = await auditEntriesOf(ctx, organizationId, 'auth.register');
    expect(register).toMatchObject({ metadata: { method: 'oauth', provider: 'github' } });
    const [login] = await auditEntriesOf(ctx, organizationId, 'auth.login');
    expect(login).toMatchObject({ metadata: { method: 'oauth', provider: 'github' } });

    // The same address again: the same account, no second organization.
    const again = await collect(
      (
        await signIn('github', {
          userinfo: { login: 'octo' },
          emails: [{ email: 'octo@example.com', primary: true, verified: true }],
        })
      ).res,
    );
    expect((await me(again)).organization.id).toBe(organizationId);
  });

  it('refuses GitHub without a primary verified address and Google with an unverified one', async () => {
    failed(
      (
        await signIn('github', {
          userinfo: { login: 'nobody' },
          emails: [
            { email: 'a@example.com', primary: true, verified: false },
            { email: 'b@example.com', primary: false, verified: true },
          ],
        })
      ).res,
    );
    failed((await signIn('google', { userinfo: { email: 'g@example.com', email_verified: false } })).res);
    failed((await signIn('google', { userinfo: { email: 'g@example.com' } })).res);
  });

  it('matches an existing account by its verified e-mail with Google, and starts Microsoft with select_account', async () => {
    const existing: Registered = await ctx.register({
      email: 'grace@example.com',
      organizationName: 'Grace Ltd',
    });
    const token = await collect(
      (await signIn('google', { userinfo: { email: 'Grace@example.com', email_verified: true, name: 'G' } }))
        .res,
    );
    expect((await me(token)).organization.id).toBe(existing.organization.id);

    const mia = { userinfo: { sub: 'mia-oid', tid: 'tenant-1', email: 'mia@example.com', name: 'Mia' } };
    const ms = await signIn('microsoft', mia);
    expect(provider.authorizations.at(-1)!.searchParams.get('prompt')).toBe('select_account');
    const miaOrg = (await me(await collect(ms.res))).organization.id;
    // The same Microsoft identity signs in again to the account it created.
    expect((await me(await collect((await signIn('microsoft', mia)).res))).organization.id).toBe(miaOrg);
    // Microsoft's address is not verified: another tenant's identity with the same address, or an address of an
    // account made otherwise (Grace's), signs in nobody.
    failed((await signIn('microsoft', { userinfo: { ...mia.userinfo, tid: 'tenant-2' } })).res);
    failed((await signIn('microsoft', { userinfo: { sub: 'x', email: 'grace@example.com' } })).res);
    failed((await signIn('microsoft', { userinfo: { email: 'nosub@example.com' } })).res);
  });

  it('refuses a tampered or missing state, a state of another provider, and a replayed code', async () => {
    provider.next = { userinfo: { email: 'eve@example.com', email_verified: true } };
    const { res, returned, cookie } = await signIn('google', provider.next);
    await collect(res);
    // The same code again (from the same browser): the provider takes a code once.
    failed(await ctx.request('GET', `${returned.pathname}${returned.search}`, { headers: { cookie } }));

    const started = await ctx.get('/api/v1/auth/google');
    const stateCookie = `svc_oauth_state=${encodeURIComponent(valueOf(setCookies(started).get('svc_oauth_state'))!)}`;
    const back = new URL(
      (await fetch(started.headers.location as string, { redirect: 'manual' })).headers.get('location')!,
    );
    const tampered = new URL(back.href);
    tampered.searchParams.set('state', 'forged');
    failed(
      await ctx.request('GET', `${tampered.pathname}${tampered.search}`, {
        headers: { cookie: stateCookie },
      }),
    );
    failed(await ctx.request('GET', `${back.pathname}${back.search}`)); // no cookie
    failed(
      await ctx.request('GET', `${back.pathname}${back.search}`, {
        headers: { cookie: 'svc_oauth_state=not-a-sealed-value' },
      }),
    );
    // The Google state presented at the GitHub return.
    failed(
      await ctx.request('GET', `/api/v1/auth/github/callback${back.search}`, {
        headers: { cookie: stateCookie },
      }),
    );
  });

  it('asks a user with TOTP for the code, so social login never skips the second factor', async () => {
    const token = await collect(
      (await signIn('google', { userinfo: { email: 'totp@example.com', email_verified: true } })).res,
    );
    const { secret } = await setup(token);
    expect((await ctx.post(`${AUTH}/mfa/enable`, { token, body: { code: code(secret) } })).statusCode).toBe(
      200,
    );
    ctx.clock.advance(30_000);
    const { res } = await signIn('google', { userinfo: { email: 'totp@example.com', email_verified: true } });
    expect(res.headers.location).toBe(`${appUrl}/login?ssoMfa=1`);
    expect(setCookies(res).has('svc_oauth_token')).toBe(false);
    const mfa = valueOf(setCookies(res).get('svc_sso_mfa'))!;
    const exchanged = await ctx.get('/api/v1/auth/sso/mfa-exchange', {
      headers: { cookie: `svc_sso_mfa=${encodeURIComponent(mfa)}` },
    });
    const login = await mfaLogin(exchanged.json().data.tempToken, code(secret));
    expect(login.statusCode, login.body).toBe(200);
    const organizationId = (await me(login.json().data.token)).organization.id as string;
    const logins = await auditEntriesOf(ctx, organizationId, 'auth.login');
    expect(logins.at(-1)).toMatchObject({ metadata: { method: 'oauth', provider: 'google', mfa: true } });
  });

  it('sets Secure and SameSite=None in production, and answers 404 for a provider that is not configured', async () => {
    const production = await TestContext.create({
      config: {
        nodeEnv: 'production',
        oauthProviders: { github: provider.settings('github'), google: null, microsoft: null },
      },
    });
    try {
      const { res } = await signIn(
        'github',
        {
          userinfo: { login: 'prod' },
          emails: [{ email: 'prod@example.com', primary: true, verified: true }],
        },
        production,
      );
      expect(setCookies(res).get('svc_oauth_token')).toMatch(/HttpOnly; Secure; SameSite=None/);
      expectErrorEnvelope(await production.get('/api/v1/auth/google'), 404, 'NOT_FOUND');
      expectErrorEnvelope(
        await production.get('/api/v1/auth/microsoft/callback?code=x&state=y'),
        404,
        'NOT_FOUND',
      );
    } finally {
      await production.close();
    }
    expectErrorEnvelope(await ctx.get('/api/v1/auth/oauth-token'), 401, 'UNAUTHORIZED');
  });
});
