import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Registered, TEST_PASSWORD, TestContext } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';
import { auditEntriesOf } from './support/audit-entries.js';
import { cookieValue as valueOf, setCookies } from './support/cookies.js';
import { MailCatcher } from './support/mail-catcher.js';
import { AUTH, mfaHelpers } from './support/mfa-suite.js';
import { LocalOAuthProvider } from './support/oauth-provider.js';
import { OidcIdp } from './support/oidc-idp.js';
import { verifySsoDomains } from './support/sso-domains.js';
import { collectHandOff, socialSignIn } from './support/sign-in.js';
import { TestDns } from './support/test-dns.js';

const DOMAIN = 'enforced.example';
const SSO_CONFIG = '/api/v1/sso/config';
const at = (local: string) => `${local}@${DOMAIN}`;

/**
 * `enforceSso`: once an organization that verified a domain turns it on, the addresses of that
 * domain sign in to it through its IdP only. Every other way in is tried and refused (403 SSO_REQUIRED), the
 * IdP's own way still works, and an owner's break-glass path (password + TOTP) opens a session that is audited
 * and mailed to the other owners.
 * See docs/identity-administrators.md, "Enforcing single sign-on".
 */
describe('enforced single sign-on', () => {
  let ctx: TestContext;
  let dns: TestDns;
  let mail: MailCatcher;
  let idp: OidcIdp;
  let social: LocalOAuthProvider;
  let appUrl: string;
  let ssoUrl: string;
  let owner: Registered;
  let orgId: string;
  /** A member of the organization with an address in its domain, and that member's pre-enforcement session. */
  let alice: { userId: string; email: string; token: string };
  /** An admin with TOTP: a higher role than member, still no break-glass. */
  let adam: { userId: string; email: string; token: string; secret: string };
  /** An owner with TOTP who is demoted between the password and the code of a break-glass sign-in. */
  let olga: { userId: string; email: string; token: string; secret: string };
  /** A second owner, who is mailed when the first one breaks the glass. */
  let coOwner: { userId: string; email: string; token: string };
  /** A member here and in another organization (joined there later). */
  let guest: { userId: string; email: string; token: string };
  let vendor: Registered;
  /** A member whose address is outside the domain. */
  let outsider: { userId: string; email: string; token: string };
  /** Links mailed before enforcement, used after it. */
  let earlyMagicLink: string;
  let earlyReset: string;
  const { setup, code, nextStep, mfaLogin } = mfaHelpers(() => ctx);

  const login = (email: string, password = TEST_PASSWORD) =>
    ctx.post(`${AUTH}/login`, { body: { email, password } });
  /** A 403 SSO_REQUIRED that says where sign-in starts. */
  function ssoRequired(res: LightMyRequestResponse) {
    const body = expectErrorEnvelope(res, 403, 'SSO_REQUIRED');
    expect(body.details).toEqual({ ssoUrl });
  }
  async function mailedToken(to: string, subject: string, path: string): Promise<string> {
    const message = await mail.waitFor(to, (m) => m.subject.startsWith(subject));
    return MailCatcher.tokenFrom(message, path);
  }
  async function putConfig(body: Record<string, unknown>, token = owner.token) {
    return ctx.request('PUT', SSO_CONFIG, {
      token,
      body: {
        provider: 'oidc',
        emailDomains: [DOMAIN],
        oidc: { issuer: idp.issuer, clientId: idp.clientId },
        ...body,
      },
    });
  }
  /** A whole OIDC sign-in through the dispatcher, as a browser; the session handed over. */
  async function ssoSignIn(email: string, account: string): Promise<string> {
    const started = await ctx.post(`${AUTH}/sso/initiate`, { body: { email } });
    expect(started.statusCode, started.body).toBe(200);
    const binding = valueOf(setCookies(started).get('svc_sso_binding'));
    const back = await idp.login(
      started.json().data.redirectUrl,
      account,
      `${ctx.config.publicUrl}/api/v1/auth/sso/callback`,
    );
    const res = await ctx.request('GET', `/api/v1/auth/sso/callback${back.search}`, {
      headers: { cookie: `svc_sso_binding=${encodeURIComponent(binding!)}` },
    });
    return collectHandOff(ctx, res);
  }
  /** Google's return for a verified address: the callback's answer. */
  const googleSignIn = (email: string) =>
    socialSignIn(ctx, social, 'google', { userinfo: { email, email_verified: true, name: 'Via Google' } });
  /** A member of the organization with TOTP switched on (before enforcement: it signs in by password). */
  async function memberWithTotp(role: 'owner' | 'admin', email: string) {
    const member = await ctx.addMember(orgId, role, email);
    const { secret } = await setup(member.token);
    const enabled = await ctx.post(`${AUTH}/mfa/enable`, { token: member.token, body: { code: code(secret) } });
    expect(enabled.statusCode, enabled.body).toBe(200);
    nextStep();
    return { ...member, secret };
  }
  const organizationOf = async (token: string) =>
    (await ctx.get(`${AUTH}/me`, { token })).json().data.organization.id as string;

  beforeAll(async () => {
    dns = await TestDns.start();
    mail = await MailCatcher.start();
    social = await LocalOAuthProvider.start();
    const publicUrl = 'http://gov.test';
    idp = await OidcIdp.start({
      redirectUri: `${publicUrl}/api/v1/auth/sso/callback`,
      accounts: {
        alice: { email: at('alice'), email_verified: true, name: 'Alice' },
        outsider: { email: 'outsider@elsewhere.example', email_verified: true },
      },
    });
    ctx = await TestContext.create({
      config: {
        smtpUrl: mail.url,
        ssoAllowInsecureHttp: true,
        ssoAllowPrivateNetworks: true,
        ssoDnsServers: [dns.address],
        oauthProviders: { github: null, google: social.settings('google'), microsoft: null },
      },
    });
    expect(ctx.config.publicUrl).toBe(publicUrl);
    appUrl = ctx.config.appUrl;
    ssoUrl = `${publicUrl}/api/v1/auth/sso/initiate`;
    owner = await ctx.register({ email: at('owner'), organizationName: 'Enforced' });
    orgId = owner.organization.id;
    await ctx.setPlan(orgId, 'governance');
    alice = await ctx.addMember(orgId, 'member', at('alice'));
    adam = await memberWithTotp('admin', at('adam'));
    olga = await memberWithTotp('owner', at('olga'));
    coOwner = await ctx.addMember(orgId, 'owner', 'co-owner@elsewhere.example');
    outsider = await ctx.addMember(orgId, 'member', 'outsider@elsewhere.example');
    guest = await ctx.addMember(orgId, 'member', at('guest'));
    vendor = await ctx.register({ organizationName: 'Vendor' });
    const invited = await ctx.post('/api/v1/team/invite', {
      token: vendor.token,
      body: { email: guest.email, role: 'member' },
    });
    expect(invited.statusCode, invited.body).toBe(201);
    const inviteToken = await mailedToken(guest.email, 'You are invited to join Vendor', '/invite/');
    // The account was made without proving its address, so the invitation's token claims it: name and password.
    const joined = await ctx.post(`/api/v1/team/invites/${inviteToken}/accept`, {
      body: { name: 'Guest', password: TEST_PASSWORD },
    });
    expect(joined.statusCode, joined.body).toBe(200);

    expect((await putConfig({ oidc: { ...idpClient() } })).statusCode).toBe(200);
    // Links asked for before the organization enforces anything.
    expect((await ctx.post(`${AUTH}/magic-link`, { body: { email: alice.email } })).statusCode).toBe(200);
    earlyMagicLink = await mailedToken(alice.email, 'Your sign-in link', '/magic-link/');
    expect((await ctx.post(`${AUTH}/forgot-password`, { body: { email: alice.email } })).statusCode).toBe(200);
    earlyReset = await mailedToken(alice.email, 'Reset your password', '/reset-password/');
  });
  afterAll(async () => {
    await ctx?.close();
    await idp?.close();
    await social?.close();
    await dns?.stop();
    await mail?.stop();
  });
  const idpClient = () => ({ issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret });

  describe('turning it on', () => {
    it('needs a verified domain, then a passing test of the very settings saved; owners only', async () => {
      const noDomain = expectErrorEnvelope(await putConfig({ enforceSso: true }), 400, 'VALIDATION_ERROR');
      expect(noDomain.details).toEqual([
        { field: 'enforceSso', message: expect.stringContaining('verified domain') },
      ]);
      await verifySsoDomains(ctx, owner.token, dns);

      const untested = expectErrorEnvelope(await putConfig({ enforceSso: true }), 400, 'VALIDATION_ERROR');
      expect(untested.details).toEqual([
        { field: 'enforceSso', message: expect.stringContaining('POST /sso/config/test') },
      ]);
      const before = (await ctx.get(SSO_CONFIG, { token: owner.token })).json().data;
      expect(before).toMatchObject({ enforceSso: false, testPassedAt: null });

      const tested = await ctx.post(`${SSO_CONFIG}/test`, { token: owner.token });
      expect(tested.statusCode, tested.body).toBe(200);
      expect(tested.json().data.ok).toBe(true);
      const passed = (await ctx.get(SSO_CONFIG, { token: owner.token })).json().data;
      expect(passed.testPassedAt).toBe(ctx.clock.now().toISOString());

      // A new client secret is a new configuration: its test has not passed, so it cannot be enforced at once.
      const newSecret = await putConfig({ enforceSso: true, oidc: { ...idpClient(), clientSecret: 'rotated' } });
      expectErrorEnvelope(newSecret, 400, 'VALIDATION_ERROR');
      // An admin may read and test, not enforce.
      const adminPut = await putConfig({ enforceSso: true }, adam.token);
      expectErrorEnvelope(adminPut, 403, 'FORBIDDEN');
      expect((await ctx.get(SSO_CONFIG, { token: owner.token })).json().data.enforceSso).toBe(false);

      // The same secret sent again (a form that resends what it holds) is the configuration that was tested.
      const on = await putConfig({ enforceSso: true, oidc: idpClient() });
      expect(on.statusCode, on.body).toBe(200);
      expect(on.json().data).toMatchObject({ enforceSso: true, testPassedAt: passed.testPassedAt });
      const [update] = (await auditEntriesOf(ctx, orgId, 'sso.config.update')).slice(-1);
      expect(update!.metadata).toMatchObject({ enforceSso: true });

      // With it on, changing the IdP settings needs a new test first: a typo would lock everyone out.
      expectErrorEnvelope(
        await putConfig({ enforceSso: true, oidc: { ...idpClient(), clientSecret: 'a-typo' } }),
        400,
        'VALIDATION_ERROR',
      );
      expect((await ctx.get(SSO_CONFIG, { token: owner.token })).json().data.enforceSso).toBe(true);
    });
  });

  describe('each way in that did not come through the IdP', () => {
    it('password login: 403 SSO_REQUIRED after the password, recorded in the organization; a wrong one is 401', async () => {
      ssoRequired(await login(alice.email));
      expectErrorEnvelope(await login(alice.email, 'Wrong-pass-123'), 401, 'INVALID_CREDENTIALS');
      const failures = await auditEntriesOf(ctx, orgId, 'auth.login_failed');
      expect(failures.at(-1)).toMatchObject({
        userId: alice.userId,
        metadata: { method: 'password', reason: 'sso_required' },
      });
      // Outside the domain, the same organization's members sign in as before.
      const outside = await login(outsider.email);
      expect(outside.statusCode, outside.body).toBe(200);
      expect(await organizationOf(outside.json().data.token)).toBe(orgId);
    });

    it('magic link and password reset: refused for the domain, account or not; a link mailed earlier is spent on nothing', async () => {
      for (const email of [alice.email, at('nobody')]) {
        ssoRequired(await ctx.post(`${AUTH}/magic-link`, { body: { email } }));
        ssoRequired(await ctx.post(`${AUTH}/forgot-password`, { body: { email } }));
      }
      expect((await ctx.post(`${AUTH}/magic-link`, { body: { email: outsider.email } })).statusCode).toBe(200);

      ssoRequired(await ctx.post(`${AUTH}/magic-link/verify`, { body: { token: earlyMagicLink } }));
      ssoRequired(
        await ctx.post(`${AUTH}/reset-password`, {
          body: { token: earlyReset, password: 'A-new-Passw0rd!' },
        }),
      );
      expect(await auditEntriesOf(ctx, orgId, 'auth.password_reset')).toHaveLength(0);
      // The password is the one it was: the refusal above still comes after the old password, not a 401.
      ssoRequired(await login(alice.email));
    });

    it('social login: back to the dashboard with error=sso_required and no session', async () => {
      const res = await googleSignIn(alice.email);
      expect(res.statusCode, res.body).toBe(302);
      expect(res.headers.location).toBe(`${appUrl}/login?error=sso_required`);
      expect(setCookies(res).has('svc_oauth_token')).toBe(false);
    });

    it('switch-org into the organization from a session elsewhere, and a refresh of a session its IdP did not open', async () => {
      // The guest's password login lands in the organization that does not enforce SSO.
      const landed = await login(guest.email);
      expect(landed.statusCode, landed.body).toBe(200);
      const elsewhere = landed.json().data.token;
      expect(await organizationOf(elsewhere)).toBe(vendor.organization.id);
      ssoRequired(await ctx.post(`${AUTH}/switch-org`, { token: elsewhere, body: { organizationId: orgId } }));
      expect(await auditEntriesOf(ctx, orgId, 'auth.org_switched')).toHaveLength(0);

      // A session opened before enforcement is not renewed; an owner's is.
      ssoRequired(await ctx.post(`${AUTH}/refresh`, { token: alice.token }));
      expect((await ctx.get(`${AUTH}/me`, { token: alice.token })).statusCode).toBe(200);
      expect((await ctx.post(`${AUTH}/refresh`, { token: coOwner.token })).statusCode).toBe(200);
    });

    it('an MFA step begun before enforcement, and an invitation accepted after it', async () => {
      // The admin's tempToken was minted while the organization enforced nothing.
      expect((await putConfig({ enforceSso: false })).statusCode).toBe(200);
      const started = await login(adam.email);
      expect(started.json().data.mfaRequired).toBe(true);
      expect((await putConfig({ enforceSso: true })).statusCode).toBe(200);
      ssoRequired(await mfaLogin(started.json().data.tempToken, code(adam.secret)));
      nextStep();

      const invited = await ctx.post('/api/v1/team/invite', {
        token: owner.token,
        body: { email: at('newbie'), role: 'member' },
      });
      expect(invited.statusCode, invited.body).toBe(201);
      const token = await mailedToken(at('newbie'), 'You are invited to join Enforced', '/invite/');
      const accepted = await ctx.post(`/api/v1/team/invites/${token}/accept`, {
        body: { name: 'Newbie', password: TEST_PASSWORD },
      });
      ssoRequired(accepted);
      // Joined, but without a session: the membership is there, and no login was recorded.
      const members = await ctx.get('/api/v1/team/members', { token: owner.token, query: { limit: '100' } });
      expect(members.json().data.map((m: { email: string }) => m.email)).toContain(at('newbie'));
      const logins = await auditEntriesOf(ctx, orgId, 'auth.login');
      expect(logins.filter((e) => e.metadata?.method === 'invite')).toHaveLength(0);
    });
  });

  describe('the ways that stay open', () => {
    it('the IdP signs the member in, and that session is renewed', async () => {
      const token = await ssoSignIn(alice.email, 'alice');
      expect(await organizationOf(token)).toBe(orgId);
      const refreshed = await ctx.post(`${AUTH}/refresh`, { token });
      expect(refreshed.statusCode, refreshed.body).toBe(200);
    });

    it('break glass needs the owner role at the code too: an owner demoted after the password gets no session', async () => {
      const started = await login(olga.email);
      expect(started.statusCode, started.body).toBe(200);
      expect(started.json().data.mfaRequired).toBe(true);
      const demoted = await ctx.request('PATCH', `/api/v1/team/members/${olga.userId}/role`, {
        token: owner.token,
        body: { role: 'admin' },
      });
      expect(demoted.statusCode, demoted.body).toBe(200);
      ssoRequired(await mfaLogin(started.json().data.tempToken, code(olga.secret)));
      nextStep();
      expect(await auditEntriesOf(ctx, orgId, 'auth.sso_break_glass')).toHaveLength(0);
    });

    it('break glass: an owner with password and TOTP, audited and mailed to the other owners', async () => {
      // Without TOTP there is no break-glass path.
      ssoRequired(await login(owner.user.email));
      const { secret } = await setup(owner.token);
      const enabled = await ctx.post(`${AUTH}/mfa/enable`, {
        token: owner.token,
        body: { code: code(secret) },
      });
      expect(enabled.statusCode, enabled.body).toBe(200);
      nextStep();
      // An admin with TOTP is refused at the password step.
      ssoRequired(await login(adam.email));

      const started = await login(owner.user.email);
      expect(started.statusCode, started.body).toBe(200);
      const { tempToken } = started.json().data;
      expectErrorEnvelope(await mfaLogin(tempToken, '000000'), 401, 'INVALID_MFA_CODE');
      expect(await auditEntriesOf(ctx, orgId, 'auth.sso_break_glass')).toHaveLength(0);
      const finished = await mfaLogin(tempToken, code(secret));
      expect(finished.statusCode, finished.body).toBe(200);
      expect(await organizationOf(finished.json().data.token)).toBe(orgId);

      const [glass] = await auditEntriesOf(ctx, orgId, 'auth.sso_break_glass');
      expect(glass).toMatchObject({ userId: owner.user.id, metadata: { mfaFactor: 'totp' } });
      const logins = await auditEntriesOf(ctx, orgId, 'auth.login');
      expect(logins.at(-1)!.metadata).toMatchObject({ method: 'password', mfa: true, breakGlass: true });
      const notice = await mail.waitFor(coOwner.email, (m) => m.subject.includes('without single sign-on'));
      expect(notice.decoded).toContain(owner.user.email);
      expect(mail.forRecipient(owner.user.email).some((m) => m.subject.includes('without single sign-on'))).toBe(
        false,
      );
    });

    it('turned off, every way in is back', async () => {
      expect((await putConfig({ enforceSso: false })).statusCode).toBe(200);
      const res = await login(alice.email);
      expect(res.statusCode, res.body).toBe(200);
      expect(await organizationOf(res.json().data.token)).toBe(orgId);
      expect((await ctx.post(`${AUTH}/magic-link`, { body: { email: alice.email } })).statusCode).toBe(200);
    });
  });
});
