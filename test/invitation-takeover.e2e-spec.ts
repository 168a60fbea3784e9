import { eq } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { invitations } from '../libs/identity/src/team/invitation.schema.js';
import { users } from '../libs/identity/src/users/user.schema.js';
import type { Role } from '#platform';
import { type Registered, TEST_PASSWORD, TestContext, uniqueEmail } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';
import { cookieValue as valueOf, setCookies } from './support/cookies.js';
import { MailCatcher } from './support/mail-catcher.js';
import { AUTH, mfaHelpers } from './support/mfa-suite.js';
import { LocalOAuthProvider, type SocialUser } from './support/oauth-provider.js';
import { OidcIdp } from './support/oidc-idp.js';
import { expectScimError, patchOp, scimOrganization, scimUser } from './support/scim.js';
import { verifySsoDomains } from './support/sso-domains.js';
import { collectHandOff, socialSignIn } from './support/sign-in.js';
import { TestDns } from './support/test-dns.js';

const INVITE = '/api/v1/team/invite';
const INVITES = '/api/v1/team/invites';
const validateUrl = (token: string) => `${INVITES}/validate/${token}`;
const acceptUrl = (token: string) => `${INVITES}/${token}/accept`;
const SUBJECT = /^You are invited to join /;
/** The password the mailbox's holder chooses when claiming; the maker's was TEST_PASSWORD. */
const CLAIMED_PASSWORD = 'Claim3d-by-Invitee';
const OIDC_DOMAIN = 'oidc-takeover.example';
const OIDC_ADDRESS = `new.hire@${OIDC_DOMAIN}`;

/** Every printable ASCII character in its full-width compatibility form (NFKC maps it back). */
const fullWidth = (text: string) =>
  text.replace(/[!-~]/g, (c) => String.fromCharCode(c.charCodeAt(0) - 0x21 + 0xff01));

describe('invitation into an account whose address was never proven (register-then-invite takeover)', () => {
  let ctx: TestContext;
  let dns: TestDns;
  let mail: MailCatcher;
  let idp: OidcIdp;
  let social: LocalOAuthProvider;
  let appUrl: string;
  const { setup, code, nextStep, mfaLogin } = mfaHelpers(() => ctx);

  beforeAll(async () => {
    dns = await TestDns.start();
    mail = await MailCatcher.start();
    social = await LocalOAuthProvider.start();
    const publicUrl = 'http://gov.test';
    idp = await OidcIdp.start({
      redirectUri: `${publicUrl}/api/v1/auth/sso/callback`,
      accounts: { hire: { email: 'New.Hire@' + OIDC_DOMAIN, email_verified: true, name: 'IdP Made' } },
    });
    ctx = await TestContext.create({
      config: {
        smtpUrl: mail.url,
        ssoAllowInsecureHttp: true,
        ssoAllowPrivateNetworks: true,
        ssoDnsServers: [dns.address],
        oauthProviders: { github: null, google: null, microsoft: social.settings('microsoft') },
      },
    });
    expect(ctx.config.publicUrl).toBe(publicUrl);
    appUrl = ctx.config.appUrl;
  });
  afterAll(async () => {
    await ctx?.close();
    await idp?.close();
    await social?.close();
    await dns?.stop();
    await mail?.stop();
  });

  const newOrg = (name: string) => ctx.register({ organizationName: name });

  /** The `n`th e-mail (1-based) to `to` that `match` accepts, waiting for it to arrive. */
  async function nthMail(to: string, match: (subject: string) => boolean, n: number) {
    const deadline = Date.now() + 5000;
    for (;;) {
      const sent = mail.forRecipient(to).filter((m) => match(m.subject));
      if (sent.length >= n) return sent[n - 1]!;
      if (Date.now() > deadline) throw new Error(`E-mail ${n} to ${to} did not arrive`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }
  const countMail = (to: string, match: (subject: string) => boolean) =>
    mail.forRecipient(to).filter((m) => match(m.subject)).length;

  /** Invites `email` as typed; the token of the link its (normalised) mailbox receives. */
  async function invite(owner: { token: string }, email: string, role: Role = 'member') {
    const mailbox = email.normalize('NFKC').trim().toLowerCase();
    const isInvite = (subject: string) => SUBJECT.test(subject);
    const before = countMail(mailbox, isInvite);
    const res = await ctx.post(INVITE, { token: owner.token, body: { email, role } });
    expect(res.statusCode, res.body).toBe(201);
    const message = await nthMail(mailbox, isInvite, before + 1);
    return {
      token: MailCatcher.tokenFrom(message, '/invite/'),
      invitation: res.json().data as { id: string; email: string },
    };
  }

  /** Proves the mailbox with a magic link asked for as `typed`; the session the link opens. */
  async function proveByMagicLink(email: string, typed = email): Promise<string> {
    const isLink = (subject: string) => subject === 'Your sign-in link';
    const before = countMail(email, isLink);
    expect((await ctx.post(`${AUTH}/magic-link`, { body: { email: typed } })).statusCode).toBe(200);
    const token = MailCatcher.tokenFrom(await nthMail(email, isLink, before + 1), '/magic-link/');
    const res = await ctx.post(`${AUTH}/magic-link/verify`, { body: { token } });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data.token;
  }

  /** An account made by a confirmed sign-up (name Grace); its session. */
  async function completeSignup(email: string): Promise<string> {
    const body = { name: 'Grace', email, password: TEST_PASSWORD, organizationName: 'Signed Up' };
    expect((await ctx.post(`${AUTH}/request-signup`, { body })).statusCode).toBe(202);
    const message = await nthMail(email, (s) => s === 'Confirm your e-mail address', 1);
    const res = await ctx.post(`${AUTH}/complete-signup`, {
      body: { token: MailCatcher.tokenFrom(message, '/verify-email/') },
    });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().data.token;
  }

  /** The session a successful SSO or social callback hands over by cookie, collected as the dashboard does. */
  const collect = (res: LightMyRequestResponse) => collectHandOff(ctx, res);

  /** A whole OIDC sign-in of the IdP's account `hire`, through org A's dispatcher: the callback's response. */
  async function ssoSignIn(): Promise<LightMyRequestResponse> {
    const started = await ctx.post(`${AUTH}/sso/initiate`, { body: { email: OIDC_ADDRESS } });
    expect(started.statusCode, started.body).toBe(200);
    const binding = valueOf(setCookies(started).get('svc_sso_binding'))!;
    const back = await idp.login(
      started.json().data.redirectUrl,
      'hire',
      `${ctx.config.publicUrl}${AUTH}/sso/callback`,
    );
    return ctx.request('GET', `${AUTH}/sso/callback${back.search}`, {
      headers: { cookie: `svc_sso_binding=${encodeURIComponent(binding)}` },
    });
  }

  /** A browser's Microsoft sign-in as `user`: the callback's response. */
  const microsoft = (user: SocialUser) => socialSignIn(ctx, social, 'microsoft', user);
  const oauthFailed = (res: LightMyRequestResponse) => {
    expect(res.statusCode, res.body).toBe(302);
    expect(res.headers.location).toBe(`${appUrl}/login?error=oauth_failed`);
    expect(setCookies(res).has('svc_oauth_token')).toBe(false);
  };

  const accept = (token: string, body?: Record<string, unknown>, bearer?: string) =>
    ctx.post(acceptUrl(token), { ...(body ? { body } : {}), ...(bearer ? { token: bearer } : {}) });

  const account = async (email: string) =>
    (await ctx.db.db.select().from(users).where(eq(users.email, email)))[0]!;

  async function me(token: string) {
    const res = await ctx.get(`${AUTH}/me`, { token });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data as {
      user: { id: string; name: string; email: string };
      role: Role;
      organization: { id: string };
    };
  }

  async function orgIds(token: string): Promise<string[]> {
    const res = await ctx.get(`${AUTH}/me/orgs`, { token });
    expect(res.statusCode, res.body).toBe(200);
    return (res.json().data as { organizationId: string }[]).map((o) => o.organizationId).sort();
  }

  async function auditOf(token: string, eventType: string) {
    const res = await ctx.get('/api/v1/audit', { token, query: { eventType } });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data as { userId: string; metadata: Record<string, unknown> }[];
  }

  const passwordLogin = (email: string, password: string) =>
    ctx.post(`${AUTH}/login`, { body: { email, password } });

  /** The invitation is still pending: validate says valid and the inviter's list shows it. */
  async function stillPending(owner: Registered, token: string, email: string) {
    expect((await ctx.get(validateUrl(token))).json().data).toMatchObject({ valid: true });
    const listed = await ctx.get(INVITES, { token: owner.token });
    expect((listed.json().data as { email: string }[]).map((i) => i.email)).toContain(email);
  }

  /**
   * The mailbox's holder claims the unproven account with the e-mailed token: a session in the inviting
   * organization, their name, a proven address, no TOTP and no link left from whoever made the account.
   */
  async function claim(owner: Registered, token: string, email: string, role: Role, name: string) {
    const res = await accept(token, { name, password: CLAIMED_PASSWORD });
    expect(res.statusCode, res.body).toBe(200);
    const data = res.json().data;
    expect(data).toMatchObject({
      token: expect.any(String),
      user: { email, name, mfaEnabled: false },
      organization: { id: owner.organization.id },
      role,
    });
    expect(await me(data.token)).toMatchObject({ role, organization: { id: owner.organization.id } });
    const stored = await account(email);
    expect(stored).toMatchObject({
      name,
      mfaEnabled: false,
      mfaSecretEncrypted: null,
      ssoId: null,
      originOrganizationId: null,
      emailVerifiedVia: 'invitation',
    });
    expect(stored.emailVerifiedAt).toEqual(ctx.clock.now());
    const [entry] = await auditOf(owner.token, 'team.invite.accepted');
    expect(entry).toMatchObject({
      userId: stored.id,
      metadata: { email, role, newUser: false, claimed: true },
    });
    expect((await ctx.get(validateUrl(token))).json().data).toEqual({ valid: false, reason: 'used' });
    // The maker's password is gone; the chosen one signs in without a second factor.
    expectErrorEnvelope(await passwordLogin(email, TEST_PASSWORD), 401, 'INVALID_CREDENTIALS');
    const login = await passwordLogin(email, CLAIMED_PASSWORD);
    expect(login.statusCode, login.body).toBe(200);
    expect(login.json().data).not.toHaveProperty('mfaRequired');
    expect((await me(login.json().data.token)).user).toMatchObject({ id: stored.id, name });
    return { session: data.token as string, userId: stored.id };
  }

  describe('register, enrol TOTP, wait for the invitation', () => {
    it('lets the invitee take the account: the maker’s sessions, password and TOTP are gone', async () => {
      const email = uniqueEmail('new.hire');
      // The attacker registers the address before the organization invites it, and locks it with TOTP.
      const attacker = await ctx.register({ email, name: 'Mallory', organizationName: 'Squat' });
      const { secret } = await setup(attacker.token);
      const enabled = await ctx.post(`${AUTH}/mfa/enable`, {
        token: attacker.token,
        body: { code: code(secret) },
      });
      expect(enabled.statusCode, enabled.body).toBe(200);
      nextStep();
      const attackerLogin = await passwordLogin(email, TEST_PASSWORD);
      expect(attackerLogin.json().data).toEqual({ mfaRequired: true, tempToken: expect.any(String) });
      expect((await account(email)).emailVerifiedAt).toBeNull();

      const victim = await newOrg('Victim Corp');
      const { token } = await invite(victim, email, 'admin');

      // Without name and password the unproven account is not joined as it is (nor with the maker's JWT).
      const bare = expectErrorEnvelope(await accept(token), 400, 'VALIDATION_ERROR');
      expect((bare.details as { field: string }[]).map((d) => d.field).sort()).toEqual(['name', 'password']);
      expectErrorEnvelope(await accept(token, undefined, attacker.token), 400, 'VALIDATION_ERROR');
      expectErrorEnvelope(await accept(token, { name: 'Only a name' }), 400, 'VALIDATION_ERROR');
      await stillPending(victim, token, email);
      expect((await ctx.get(`${AUTH}/me`, { token: attacker.token })).statusCode).toBe(200);

      const { session } = await claim(victim, token, email, 'admin', 'Nia New-Hire');
      expectErrorEnvelope(await ctx.get(`${AUTH}/me`, { token: attacker.token }), 401, 'SESSION_REVOKED');
      expectErrorEnvelope(
        await ctx.post(`${AUTH}/refresh`, { token: attacker.token }),
        401,
        'SESSION_REVOKED',
      );
      // The TOTP the attacker enrolled does not stand between the invitee and the account.
      expect((await ctx.get(`${AUTH}/security-settings`, { token: session })).json().data).toMatchObject({
        mfaEnabled: false,
        backupCodesRemaining: 0,
      });
      expect(await orgIds(session)).toEqual([attacker.organization.id, victim.organization.id].sort());
    });
  });

  describe('the same address made by SCIM, an IdP or Microsoft, then claimed by the invitee', () => {
    it('SCIM renames its own account to the address: unproven, and the invitation takes it from the organization', async () => {
      const orgA = await scimOrganization(ctx, 'SCIM Squatter');
      const made = uniqueEmail('scim-made');
      const created = await orgA.client.post('/Users', scimUser(made, { displayName: 'SCIM Made' }));
      expect(created.statusCode, created.body).toBe(201);
      const id = created.json().id as string;
      // SCIM made it: unproven, the organization's own account, which its SCIM may readdress.
      expect(await account(made)).toMatchObject({
        id,
        emailVerifiedAt: null,
        originOrganizationId: expect.any(String),
      });
      const email = uniqueEmail('new.hire');
      const renamed = await orgA.client.patch(
        `/Users/${id}`,
        patchOp({ op: 'replace', path: 'userName', value: email }),
      );
      expect(renamed.statusCode, renamed.body).toBe(200);
      expect(renamed.json().userName).toBe(email);
      expect(await account(email)).toMatchObject({
        id,
        emailVerifiedAt: null,
        emailVerifiedVia: null,
        originOrganizationId: orgA.owner.organization.id,
      });

      const victim = await newOrg('Victim SCIM');
      const { token } = await invite(victim, email, 'admin');
      expectErrorEnvelope(await accept(token, {}), 400, 'VALIDATION_ERROR');
      await stillPending(victim, token, email);
      const { session } = await claim(victim, token, email, 'admin', 'Scarlett Invitee');
      expect(await orgIds(session)).toEqual([orgA.owner.organization.id, victim.organization.id].sort());

      // No longer org A's own account: its SCIM can neither readdress it nor rename its holder.
      expectScimError(
        await orgA.client.patch(
          `/Users/${id}`,
          patchOp({ op: 'replace', path: 'userName', value: uniqueEmail('back') }),
        ),
        400,
        'invalidValue',
      );
      const display = await orgA.client.patch(
        `/Users/${id}`,
        patchOp({ op: 'replace', path: 'displayName', value: 'Renamed By IdP' }),
      );
      expect(display.statusCode, display.body).toBe(200);
      expect((await account(email)).name).toBe('Scarlett Invitee');
      expect((await me(session)).user.email).toBe(email);
    });

    it('SCIM cannot readdress an account it did not create: its owner, or a member who joined by invitation', async () => {
      const orgA = await scimOrganization(ctx, 'SCIM Reach');
      const email = uniqueEmail('invited');
      const { token } = await invite(orgA.owner, email, 'member');
      const joined = await accept(token, { name: 'Ivy Invited', password: TEST_PASSWORD });
      expect(joined.statusCode, joined.body).toBe(200);
      const memberId = joined.json().data.user.id as string;
      for (const [id, current] of [
        [memberId, email],
        [orgA.owner.user.id, orgA.owner.user.email],
      ] as const) {
        const target = uniqueEmail('taken-over');
        const before = await account(current);
        expectScimError(
          await orgA.client.patch(
            `/Users/${id}`,
            patchOp({ op: 'replace', path: 'userName', value: target }),
          ),
          400,
          'invalidValue',
        );
        expect((await orgA.client.get(`/Users/${id}`)).json().userName).toBe(current);
        expect((await ctx.db.db.select().from(users).where(eq(users.email, target))).length).toBe(0);
        expect(await account(current)).toEqual(before);
      }
      // Both still sign in with their own address.
      expect(await ctx.login(email)).toEqual(expect.any(String));
      expect(await ctx.login(orgA.owner.user.email)).toEqual(expect.any(String));
    });

    it('an OIDC IdP provisions the address: the claim takes it, and that IdP’s sessions no longer own the account', async () => {
      const orgA = await newOrg('OIDC Squatter');
      await ctx.setPlan(orgA.organization.id, 'governance');
      const put = await ctx.request('PUT', '/api/v1/sso/config', {
        token: orgA.token,
        body: {
          provider: 'oidc',
          emailDomains: [OIDC_DOMAIN],
          oidc: { issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret },
        },
      });
      expect(put.statusCode, put.body).toBe(200);
      // The domain routes sign-in and provisioning only once its TXT record proves it.
      await verifySsoDomains(ctx, orgA.token, dns);
      const made = await collect(await ssoSignIn());
      const stored = await account(OIDC_ADDRESS);
      expect(stored).toMatchObject({
        name: 'IdP Made',
        passwordHash: null,
        emailVerifiedAt: null,
        originOrganizationId: orgA.organization.id,
        ssoId: expect.any(String),
      });
      // While the account is org A's own, org A's SSO session may change it.
      const own = await ctx.patch(`${AUTH}/profile`, { token: made, body: { name: 'Set By Org A' } });
      expect(own.statusCode, own.body).toBe(200);

      const victim = await newOrg('Victim OIDC');
      const { token } = await invite(victim, OIDC_ADDRESS, 'admin');
      expectErrorEnvelope(await accept(token, undefined, made), 400, 'VALIDATION_ERROR');
      await stillPending(victim, token, OIDC_ADDRESS);
      const { session } = await claim(victim, token, OIDC_ADDRESS, 'admin', 'Olivia Invitee');
      expectErrorEnvelope(await ctx.get(`${AUTH}/me`, { token: made }), 401, 'SESSION_REVOKED');

      // Org A's IdP still signs its member in to org A, but that session is scoped to org A now.
      const scoped = await collect(await ssoSignIn());
      expect(await me(scoped)).toMatchObject({ organization: { id: orgA.organization.id } });
      expectErrorEnvelope(
        await ctx.patch(`${AUTH}/profile`, { token: scoped, body: { name: 'Org A Again' } }),
        403,
        'REAUTHENTICATION_REQUIRED',
      );
      expectErrorEnvelope(
        await ctx.post(`${AUTH}/change-password`, {
          token: scoped,
          body: { currentPassword: CLAIMED_PASSWORD, newPassword: 'Org-A-Chose-9' },
        }),
        403,
        'REAUTHENTICATION_REQUIRED',
      );
      expectErrorEnvelope(
        await ctx.post(`${AUTH}/mfa/setup`, { token: scoped }),
        403,
        'REAUTHENTICATION_REQUIRED',
      );
      expect(await account(OIDC_ADDRESS)).toMatchObject({ name: 'Olivia Invitee', mfaEnabled: false });
      expect(await ctx.login(OIDC_ADDRESS, CLAIMED_PASSWORD)).toEqual(expect.any(String));
      // The invitee's own session manages the account.
      const mine = await ctx.patch(`${AUTH}/profile`, { token: session, body: { name: 'Olivia' } });
      expect(mine.statusCode, mine.body).toBe(200);
      expect((await account(OIDC_ADDRESS)).name).toBe('Olivia');
    });

    it('a Microsoft sign-up with the address: the invitee claims it, and that Microsoft identity signs in no more', async () => {
      const email = uniqueEmail('new.hire');
      const mallory: SocialUser = {
        userinfo: { sub: 'mallory-oid', tid: 'evil-tenant', email: email.toUpperCase(), name: 'Mallory MS' },
      };
      const made = await collect(await microsoft(mallory));
      const stored = await account(email);
      expect(stored).toMatchObject({
        emailVerifiedAt: null,
        ssoId: 'microsoft:evil-tenant:mallory-oid',
        originOrganizationId: null,
      });
      // Until the claim, the identity that made the account signs in to it again.
      const again = await collect(await microsoft(mallory));
      expect((await me(again)).user.id).toBe(stored.id);

      const victim = await newOrg('Victim Microsoft');
      const { token } = await invite(victim, email, 'member');
      expectErrorEnvelope(await accept(token, { password: CLAIMED_PASSWORD }), 400, 'VALIDATION_ERROR');
      await stillPending(victim, token, email);
      const { session, userId } = await claim(victim, token, email, 'member', 'Mia Invitee');
      expect(userId).toBe(stored.id);
      for (const old of [made, again]) {
        expectErrorEnvelope(await ctx.get(`${AUTH}/me`, { token: old }), 401, 'SESSION_REVOKED');
      }
      oauthFailed(await microsoft(mallory));
      expect((await me(session)).user).toMatchObject({ id: stored.id, name: 'Mia Invitee' });
    });
  });

  describe('an account whose address was proven joins only with its own credentials', () => {
    it('joins with its own session (address proven by a magic link), keeping its organizations and sessions', async () => {
      const home = await newOrg('Home Base');
      const email = home.user.email;
      const proven = await proveByMagicLink(email);
      expect(await account(email)).toMatchObject({ emailVerifiedVia: 'magic_link', passwordHash: null });
      // The magic link was the first proof of a registered address: it claimed the account, so whatever password
      // and sessions the registration left (a stranger's, for all the link knows) are gone.
      expectErrorEnvelope(await ctx.get(`${AUTH}/me`, { token: home.token }), 401, 'SESSION_REVOKED');
      expectErrorEnvelope(
        await ctx.post(`${AUTH}/login`, { body: { email, password: TEST_PASSWORD } }),
        401,
        'INVALID_CREDENTIALS',
      );
      const inviter = await newOrg('Joining Co');
      const { token } = await invite(inviter, email, 'admin');

      expectErrorEnvelope(await accept(token), 401, 'UNAUTHORIZED');
      const res = await accept(token, { name: 'Ignored Name' }, proven);
      expect(res.statusCode, res.body).toBe(200);
      const data = res.json().data;
      expect(data).toMatchObject({
        user: { id: home.user.id, name: 'Test User' },
        organization: { id: inviter.organization.id },
        role: 'admin',
      });
      expect(await me(data.token)).toMatchObject({
        role: 'admin',
        organization: { id: inviter.organization.id },
      });
      expect(await orgIds(data.token)).toEqual([home.organization.id, inviter.organization.id].sort());
      expect((await ctx.get(`${AUTH}/me`, { token: proven })).statusCode).toBe(200);
      const [entry] = await auditOf(inviter.token, 'team.invite.accepted');
      expect(entry!.metadata).toMatchObject({ email, role: 'admin', newUser: false, claimed: false });
    });

    it('refuses nobody, a wrong password, another account’s or a broken JWT, then joins with the password', async () => {
      const email = uniqueEmail('signed-up');
      const signup = await completeSignup(email);
      expect(await account(email)).toMatchObject({ emailVerifiedVia: 'signup' });
      const inviter = await newOrg('Careful Co');
      const stranger = await newOrg('Stranger');
      const { token } = await invite(inviter, email, 'member');
      const wrong = { name: 'Mallory', password: 'Wr0ng-Passw0rd' };

      expectErrorEnvelope(await accept(token), 401, 'UNAUTHORIZED');
      expectErrorEnvelope(await accept(token, { name: 'Mallory' }), 401, 'UNAUTHORIZED');
      expectErrorEnvelope(await accept(token, wrong), 401, 'INVALID_CREDENTIALS');
      // A password sent is checked even beside the account's own session.
      expectErrorEnvelope(await accept(token, wrong, signup), 401, 'INVALID_CREDENTIALS');
      expectErrorEnvelope(await accept(token, undefined, stranger.token), 401, 'UNAUTHORIZED');
      expectErrorEnvelope(await accept(token, undefined, 'not-a-jwt'), 401, 'UNAUTHORIZED');
      await stillPending(inviter, token, email);
      expect(await account(email)).toMatchObject({ name: 'Grace', emailVerifiedVia: 'signup' });
      expect((await ctx.get(`${AUTH}/me`, { token: signup })).statusCode).toBe(200);

      const res = await accept(token, { name: 'Mallory', password: TEST_PASSWORD });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data).toMatchObject({
        user: { email, name: 'Grace' },
        organization: { id: inviter.organization.id },
        role: 'member',
      });
      expect((await ctx.get(`${AUTH}/me`, { token: signup })).statusCode).toBe(200);
      expect((await ctx.get(validateUrl(token))).json().data).toEqual({ valid: false, reason: 'used' });
    });

    it('answers an account with TOTP (made by a first invitation) with an MFA step bound to the inviting organization', async () => {
      const first = await newOrg('First Employer');
      const email = uniqueEmail('mfa');
      const created = await accept((await invite(first, email)).token, {
        name: 'Max Factor',
        password: TEST_PASSWORD,
      });
      expect(created.statusCode, created.body).toBe(200);
      const session = created.json().data.token as string;
      expect(await account(email)).toMatchObject({ emailVerifiedVia: 'invitation' });
      const { secret } = await setup(session);
      expect(
        (await ctx.post(`${AUTH}/mfa/enable`, { token: session, body: { code: code(secret) } })).statusCode,
      ).toBe(200);
      nextStep();

      const second = await newOrg('Second Employer');
      const { token } = await invite(second, email, 'viewer');
      const challenged = await accept(token, undefined, session);
      expect(challenged.statusCode, challenged.body).toBe(200);
      expect(challenged.json().data).toEqual({ mfaRequired: true, tempToken: expect.any(String) });
      const done = await mfaLogin(challenged.json().data.tempToken, code(secret));
      expect(done.statusCode, done.body).toBe(200);
      expect(await me(done.json().data.token)).toMatchObject({
        role: 'viewer',
        organization: { id: second.organization.id },
      });
      expect(await orgIds(done.json().data.token)).toEqual(
        [first.organization.id, second.organization.id].sort(),
      );
      const [entry] = await auditOf(second.token, 'team.invite.accepted');
      expect(entry!.metadata).toMatchObject({ newUser: false, claimed: false });
      expect(await account(email)).toMatchObject({ mfaEnabled: true, name: 'Max Factor' });
    });
  });

  describe('addresses in compatibility forms (NFKC)', () => {
    it('stores a full-width invitation address normalised, so it reaches the existing account and no look-alike', async () => {
      const email = uniqueEmail('dave');
      const typed = fullWidth(email.toUpperCase());
      expect(typed).not.toBe(email);
      const dave = await ctx.register({ email: typed, organizationName: 'Dave Home' });
      expect(dave.user.email).toBe(email);
      // The look-alike cannot be registered as a second account.
      for (const again of [typed, email]) {
        const twin = await ctx.post(`${AUTH}/register`, {
          body: { name: 'Twin', email: again, password: TEST_PASSWORD, organizationName: 'Twin' },
        });
        expectErrorEnvelope(twin, 409, 'EMAIL_IN_USE');
      }
      const proven = await proveByMagicLink(email);

      const inviter = await newOrg('Width Co');
      const { token, invitation } = await invite(inviter, typed, 'member');
      expect(invitation.email).toBe(email);
      const [stored] = await ctx.db.db.select().from(invitations).where(eq(invitations.id, invitation.id));
      expect(stored!.email).toBe(email);
      expect(mail.messages.filter((m) => m.to.includes(typed.toLowerCase()))).toEqual([]);
      const res = await accept(token, undefined, proven);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data).toMatchObject({
        user: { id: dave.user.id, email },
        organization: { id: inviter.organization.id },
      });
    });

    it('folds the “ﬁ” ligature in registration, magic links and invitations alike', async () => {
      const email = uniqueEmail('fiona');
      const ligature = email.replace('fi', '\ufb01');
      expect(ligature).not.toBe(email);
      const fiona = await ctx.register({ email: `  ${ligature} `, organizationName: 'Fiona Home' });
      expect(fiona.user.email).toBe(email);
      const proven = await proveByMagicLink(email, ligature);
      const inviter = await newOrg('Ligature Co');
      const { token, invitation } = await invite(inviter, ligature, 'admin');
      expect(invitation.email).toBe(email);
      // The magic link claimed the registered account (its password went): it joins with its own session.
      const res = await accept(token, {}, proven);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data).toMatchObject({ user: { id: fiona.user.id }, role: 'admin' });
      expect(await orgIds(proven)).toEqual([fiona.organization.id, inviter.organization.id].sort());
    });
  });
});
