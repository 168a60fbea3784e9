import { createHash } from 'node:crypto';
import { eq } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memberships } from '../libs/identity/src/organizations/organization.schema.js';
import { ssoLoginStates } from '../libs/identity/src/sso/sso.schema.js';
import { JobScheduler, newId } from '#platform';
import { type Registered, TestContext } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';
import { auditEntriesOf } from './support/audit-entries.js';
import { cookieValue as valueOf, setCookies } from './support/cookies.js';
import { AUTH, mfaHelpers } from './support/mfa-suite.js';
import { OidcIdp } from './support/oidc-idp.js';
import { collectHandOff } from './support/sign-in.js';
import { verifySsoDomains } from './support/sso-domains.js';
import { TestDns } from './support/test-dns.js';

const INITIATE = '/api/v1/auth/sso/initiate';
const CALLBACK = '/api/v1/auth/sso/callback';

describe('OIDC single sign-on', () => {
  let ctx: TestContext;
  let dns: TestDns;
  let idp: OidcIdp;
  let owner: Registered;
  let redirectUri: string;
  let appUrl: string;
  const { setup, code, mfaLogin } = mfaHelpers(() => ctx);

  /** Starts a sign-in as a browser would: the IdP URL and the binding cookie. */
  async function initiate(email: string): Promise<{ redirectUrl: string; binding: string | undefined }> {
    const res = await ctx.post(INITIATE, { body: { email } });
    expect(res.statusCode, res.body).toBe(200);
    return {
      redirectUrl: res.json().data.redirectUrl,
      binding: valueOf(setCookies(res).get('svc_sso_binding')),
    };
  }
  /** The IdP's return, with the browser's binding cookie. */
  const callback = (url: URL, binding: string | undefined) =>
    ctx.request('GET', `${CALLBACK}${url.search}`, {
      headers: binding ? { cookie: `svc_sso_binding=${encodeURIComponent(binding)}` } : {},
    });
  /** A whole sign-in of `account` with `email`: the callback's response and what the IdP sent back. */
  async function signIn(email: string, account: string) {
    const { redirectUrl, binding } = await initiate(email);
    expect(redirectUrl.startsWith(`${idp.issuer}/auth?`)).toBe(true);
    const back = await idp.login(redirectUrl, account, redirectUri);
    return { res: await callback(back, binding), back, binding };
  }
  const failed = (res: LightMyRequestResponse) => {
    expect(res.statusCode, res.body).toBe(302);
    expect(res.headers.location).toBe(`${appUrl}/login?error=sso_failed`);
    expect(setCookies(res).has('svc_oauth_token')).toBe(false);
  };
  /** The session the callback left in its cookie, collected as the dashboard does. */
  const collect = (res: LightMyRequestResponse) => collectHandOff(ctx, res);

  beforeAll(async () => {
    dns = await TestDns.start();
    ctx = await TestContext.create({
      config: { ssoAllowInsecureHttp: true, ssoAllowPrivateNetworks: true, ssoDnsServers: [dns.address] },
    });
    redirectUri = `${ctx.config.publicUrl}/api/v1/auth/sso/callback`;
    appUrl = ctx.config.appUrl;
    idp = await OidcIdp.start({
      redirectUri,
      accounts: {
        alice: {
          email: 'Alice@acme.example',
          email_verified: true,
          name: 'Alice Admin',
          groups: ['gov-admins'],
        },
        erin: { email: 'erin@acme.example', email_verified: true, name: 'Erin', groups: ['engineering'] },
        bob: { email: 'bob@acme.example', email_verified: false, name: 'Bob' },
        carol: { email: 'carol@elsewhere.example', email_verified: true },
        dave: { email: 'dave@acme.example', email_verified: true },
        frank: { email: 'frank@acme.example', email_verified: true },
        nomail: { name: 'No mail' },
      },
    });
    owner = await ctx.register({ organizationName: 'Acme' });
    await ctx.setPlan(owner.organization.id, 'governance');
    const put = await ctx.request('PUT', '/api/v1/sso/config', {
      token: owner.token,
      body: {
        provider: 'oidc',
        emailDomains: ['acme.example'],
        roleMappingRules: [{ pattern: '^gov-admins$', role: 'admin' }],
        oidc: { issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret },
      },
    });
    expect(put.statusCode, put.body).toBe(200);
    await verifySsoDomains(ctx, owner.token, dns);
  });
  afterAll(async () => {
    await ctx?.close();
    await idp?.close();
    await dns?.stop();
  });

  it('provisions an unknown e-mail with the mapped role, hands the session over by cookie, and audits it', async () => {
    const { res } = await signIn('alice@acme.example', 'alice');
    expect(res.headers.location).not.toMatch(/token|eyJ/);
    const token = await collect(res);
    const me = await ctx.get('/api/v1/auth/me', { token });
    expect(me.statusCode, me.body).toBe(200);
    expect(me.json().data.user).toMatchObject({ email: 'alice@acme.example', name: 'Alice Admin' });
    const orgs = (await ctx.get('/api/v1/auth/me/orgs', { token })).json().data;
    expect(orgs).toEqual([expect.objectContaining({ organizationId: owner.organization.id, role: 'admin' })]);
    const [provisioned] = await auditEntriesOf(ctx, owner.organization.id, 'sso.user.provisioned');
    expect(provisioned).toMatchObject({
      metadata: { provider: 'oidc', role: 'admin', groups: ['gov-admins'] },
    });
    const logins = await auditEntriesOf(ctx, owner.organization.id, 'auth.login');
    expect(logins.at(-1)).toMatchObject({ metadata: { method: 'sso', provider: 'oidc' } });
    // The cookie is taken once.
    expectErrorEnvelope(await ctx.get('/api/v1/auth/oauth-token'), 401, 'UNAUTHORIZED');

    // Without a matching group: member. A second sign-in keeps the role the first one gave.
    const erin = await collect((await signIn('erin@acme.example', 'erin')).res);
    expect((await ctx.get('/api/v1/auth/me/orgs', { token: erin })).json().data[0].role).toBe('member');
    const again = await collect((await signIn('alice@acme.example', 'alice')).res);
    expect((await ctx.get('/api/v1/auth/me/orgs', { token: again })).json().data[0].role).toBe('admin');
  });

  it('keeps an SSO session in its organization: no switch to another one, even after a refresh', async () => {
    const token = await collect((await signIn('alice@acme.example', 'alice')).res);
    const aliceId = (await ctx.get('/api/v1/auth/me', { token })).json().data.user.id as string;
    const elsewhere = await ctx.register({ organizationName: 'Elsewhere' });
    const now = ctx.clock.now();
    await ctx.db.db.insert(memberships).values({
      id: newId(),
      organizationId: elsewhere.organization.id,
      userId: aliceId,
      role: 'admin',
      isActive: true,
      createdAt: now,
      updatedAt: now,
    });
    const body = { organizationId: elsewhere.organization.id };
    expectErrorEnvelope(await ctx.post('/api/v1/auth/switch-org', { token, body }), 403, 'FORBIDDEN');
    const refreshed = await ctx.post('/api/v1/auth/refresh', { token });
    expect(refreshed.statusCode, refreshed.body).toBe(200);
    const again = refreshed.json().data.token as string;
    expectErrorEnvelope(await ctx.post('/api/v1/auth/switch-org', { token: again, body }), 403, 'FORBIDDEN');
  });

  it('takes a state once, from the browser that started it', async () => {
    const { res, back, binding } = await signIn('erin@acme.example', 'erin');
    await collect(res);
    failed(await callback(back, binding)); // the same code and state again

    const forged = new URL(back.href);
    forged.searchParams.set('state', 'a-state-this-service-never-issued');
    failed(await callback(forged, binding));

    // A state started in one browser, returned with another's binding (a login CSRF), or with none.
    const first = await initiate('erin@acme.example');
    const second = await initiate('erin@acme.example');
    const firstBack = await idp.login(first.redirectUrl, 'erin', redirectUri);
    failed(await callback(firstBack, second.binding));
    const again = await initiate('erin@acme.example');
    failed(await callback(await idp.login(again.redirectUrl, 'erin', redirectUri), undefined));

    // An ID token whose nonce is not the one this sign-in sent (the stored nonce changed under it).
    const swapped = await initiate('erin@acme.example');
    const state = new URL(swapped.redirectUrl).searchParams.get('state')!;
    await ctx.db.db
      .update(ssoLoginStates)
      .set({ nonce: 'another-nonce' })
      .where(eq(ssoLoginStates.id, createHash('sha256').update(state).digest('hex')));
    failed(await callback(await idp.login(swapped.redirectUrl, 'erin', redirectUri), swapped.binding));
  });

  it('refuses an ID token for another audience, with alg none, or signed with another algorithm', async () => {
    const ok = await signIn('erin@acme.example', 'erin');
    await collect(ok.res); // the same sign-in, untampered, passes
    for (const tamper of ['audience', 'alg-none', 'alg-hs256'] as const) {
      idp.tamper = tamper;
      try {
        failed((await signIn('erin@acme.example', 'erin')).res);
      } finally {
        idp.tamper = undefined;
      }
    }
  });

  it('refuses an unverified e-mail, one outside the SSO domains, none, and an account that is not a member', async () => {
    failed((await signIn('bob@acme.example', 'bob')).res);
    failed((await signIn('carol@acme.example', 'carol')).res);
    failed((await signIn('nomail@acme.example', 'nomail')).res);
    // dave has an account of his own (another organization): the IdP's word does not make him a member.
    const dave = await ctx.register({ email: 'dave@acme.example', organizationName: 'Dave’s' });
    failed((await signIn('dave@acme.example', 'dave')).res);
    // The refusal is dave's own to see (his login activity); neither his organization's audit log nor the SSO
    // organization's, where he is no member, records it.
    expect(await auditEntriesOf(ctx, dave.organization.id, 'auth.login_failed')).toEqual([]);
    expect(await auditEntriesOf(ctx, owner.organization.id, 'auth.login_failed')).toEqual([]);
    const activity = await ctx.get('/api/v1/auth/login-activity', { token: dave.token });
    expect(activity.json().data[0]).toMatchObject({ method: 'sso', success: false });
  });

  it('refuses a suspended member at the callback', async () => {
    const token = await collect((await signIn('frank@acme.example', 'frank')).res);
    const frankId = (await ctx.get('/api/v1/auth/me', { token })).json().data.user.id;
    const suspended = await ctx.patch(`/api/v1/team/members/${frankId}/status`, {
      token: owner.token,
      body: { isActive: false },
    });
    expect(suspended.statusCode, suspended.body).toBe(200);
    failed((await signIn('frank@acme.example', 'frank')).res);
  });

  it('answers the dispatcher the same way whether or not the account exists, and without SSO', async () => {
    const known = await initiate('alice@acme.example');
    const unknown = await initiate('nobody-here@acme.example');
    expect(new URL(known.redirectUrl).origin).toBe(new URL(unknown.redirectUrl).origin);
    expect(known.binding).toBeTruthy();
    expect(unknown.binding).toBeTruthy();
    for (const email of ['someone@no-sso.example', `${owner.user.email}`]) {
      const res = await ctx.post(INITIATE, { body: { email } });
      expect(res.statusCode).toBe(200);
      expect(res.json().data).toEqual({ redirectUrl: `${appUrl}/login?sso=unavailable` });
      expect(setCookies(res).size).toBe(0);
    }
    expectErrorEnvelope(
      await ctx.post(INITIATE, { body: { email: 'not an address' } }),
      400,
      'VALIDATION_ERROR',
    );
  });

  it('sends the browser through TOTP when the organization requires MFA after SSO', async () => {
    // erin sets up TOTP on her account first.
    const token = await collect((await signIn('erin@acme.example', 'erin')).res);
    const { secret } = await setup(token);
    const enabled = await ctx.post(`${AUTH}/mfa/enable`, { token, body: { code: code(secret) } });
    expect(enabled.statusCode, enabled.body).toBe(200);
    ctx.clock.advance(30_000);
    const config = (await ctx.get('/api/v1/sso/config', { token: owner.token })).json().data;
    const put = await ctx.request('PUT', '/api/v1/sso/config', {
      token: owner.token,
      body: {
        provider: 'oidc',
        emailDomains: config.emailDomains,
        requireMfaEvenWithSso: true,
        roleMappingRules: config.roleMappingRules,
        oidc: { issuer: idp.issuer, clientId: idp.clientId },
      },
    });
    expect(put.statusCode, put.body).toBe(200);

    const { res } = await signIn('erin@acme.example', 'erin');
    expect(res.statusCode).toBe(302);
    expect(res.headers.location).toBe(`${appUrl}/login?ssoMfa=1`);
    const cookies = setCookies(res);
    expect(cookies.has('svc_oauth_token')).toBe(false);
    const mfaCookie = cookies.get('svc_sso_mfa')!;
    expect(mfaCookie).toMatch(/HttpOnly/);
    const exchanged = await ctx.get('/api/v1/auth/sso/mfa-exchange', {
      headers: { cookie: `svc_sso_mfa=${encodeURIComponent(valueOf(mfaCookie)!)}` },
    });
    expect(exchanged.statusCode, exchanged.body).toBe(200);
    expect(setCookies(exchanged).get('svc_sso_mfa')).toMatch(/Max-Age=0/);
    const login = await mfaLogin(exchanged.json().data.tempToken, code(secret));
    expect(login.statusCode, login.body).toBe(200);
    expect(login.json().data.token).toEqual(expect.any(String));
    const logins = await auditEntriesOf(ctx, owner.organization.id, 'auth.login');
    expect(logins.at(-1)).toMatchObject({ metadata: { method: 'sso', provider: 'oidc', mfa: true } });
    expectErrorEnvelope(await ctx.get('/api/v1/auth/sso/mfa-exchange'), 401, 'UNAUTHORIZED');

    // A member without TOTP cannot pass: refused rather than let through.
    failed((await signIn('alice@acme.example', 'alice')).res);
  });

  it('purges sign-ins that were never finished once they expire', async () => {
    await initiate('erin@acme.example');
    const open = await ctx.db.db.select().from(ssoLoginStates);
    expect(open.length).toBeGreaterThan(0);
    await ctx.service(JobScheduler).runNow('sso-login-states-purge');
    expect((await ctx.db.db.select().from(ssoLoginStates)).length).toBeGreaterThan(0);
    ctx.clock.advance(11 * 60_000);
    await ctx.service(JobScheduler).runNow('sso-login-states-purge');
    expect(await ctx.db.db.select().from(ssoLoginStates)).toHaveLength(0);
  });
});
