import { eq } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { users } from '../../libs/identity/src/users/user.schema.js';
import type { Role } from '#platform';
import { type Registered, TEST_PASSWORD, TestContext } from './app.js';
import { expectErrorEnvelope } from './assertions.js';
import { auditEntries } from './audit-entries.js';
import { cookieValue as valueOf, setCookies } from './cookies.js';
import { MailCatcher } from './mail-catcher.js';
import { AUTH } from './mfa-suite.js';
import { LocalOAuthProvider, type SocialUser } from './oauth-provider.js';
import { OidcIdp } from './oidc-idp.js';
import { collectHandOff, socialSignIn } from './sign-in.js';
import { SuiteFixture, useSuite } from './suite.js';
import { TestDns } from './test-dns.js';

export const INVITE = '/api/v1/team/invite';
export const INVITES = '/api/v1/team/invites';
export const validateUrl = (token: string) => `${INVITES}/validate/${token}`;
export const acceptUrl = (token: string) => `${INVITES}/${token}/accept`;
const SUBJECT = /^You are invited to join /;
/** The password the mailbox's holder chooses when claiming; the maker's was TEST_PASSWORD. */
export const CLAIMED_PASSWORD = 'Claim3d-by-Invitee';
export const OIDC_DOMAIN = 'oidc-takeover.example';
export const OIDC_ADDRESS = `new.hire@${OIDC_DOMAIN}`;

/** Every printable ASCII character in its full-width compatibility form (NFKC maps it back). */
export const fullWidth = (text: string) =>
  text.replace(/[!-~]/g, (c) => String.fromCharCode(c.charCodeAt(0) - 0x21 + 0xff01));

/**
 * The invitation takeover suites' world: an application that sends mail, signs in with OIDC (an IdP that knows the
 * account `hire`, at OIDC_ADDRESS) and with Microsoft, and proves SSO domains on its own DNS server. Its fields are
 * set before the first test (read them inside a test); its helpers may be taken at once.
 */
export class InvitationTakeoverSuite extends SuiteFixture {
  ctx!: TestContext;
  dns!: TestDns;
  mail!: MailCatcher;
  idp!: OidcIdp;
  social!: LocalOAuthProvider;
  appUrl!: string;

  readonly newOrg = (name: string) => this.ctx.register({ organizationName: name });

  /** The `n`th e-mail (1-based) to `to` that `match` accepts, waiting for it to arrive. */
  readonly nthMail = async (to: string, match: (subject: string) => boolean, n: number) => {
    const deadline = Date.now() + 5000;
    for (;;) {
      const sent = this.mail.forRecipient(to).filter((m) => match(m.subject));
      if (sent.length >= n) return sent[n - 1]!;
      if (Date.now() > deadline) throw new Error(`E-mail ${n} to ${to} did not arrive`);
      await new Promise((r) => setTimeout(r, 25));
    }
  };
  readonly countMail = (to: string, match: (subject: string) => boolean) =>
    this.mail.forRecipient(to).filter((m) => match(m.subject)).length;

  /** Invites `email` as typed; the token of the link its (normalised) mailbox receives. */
  readonly invite = async (owner: { token: string }, email: string, role: Role = 'member') => {
    const mailbox = email.normalize('NFKC').trim().toLowerCase();
    const isInvite = (subject: string) => SUBJECT.test(subject);
    const before = this.countMail(mailbox, isInvite);
    const res = await this.ctx.post(INVITE, { token: owner.token, body: { email, role } });
    expect(res.statusCode, res.body).toBe(201);
    const message = await this.nthMail(mailbox, isInvite, before + 1);
    return {
      token: MailCatcher.tokenFrom(message, '/invite/'),
      invitation: res.json().data as { id: string; email: string },
    };
  };

  /** Proves the mailbox with a magic link asked for as `typed`; the session the link opens. */
  readonly proveByMagicLink = async (email: string, typed = email): Promise<string> => {
    const isLink = (subject: string) => subject === 'Your sign-in link';
    const before = this.countMail(email, isLink);
    expect((await this.ctx.post(`${AUTH}/magic-link`, { body: { email: typed } })).statusCode).toBe(200);
    const token = MailCatcher.tokenFrom(await this.nthMail(email, isLink, before + 1), '/magic-link/');
    const res = await this.ctx.post(`${AUTH}/magic-link/verify`, { body: { token } });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data.token;
  };

  /** An account made by a confirmed sign-up (name Grace); its session. */
  readonly completeSignup = async (email: string): Promise<string> => {
    const body = { name: 'Grace', email, password: TEST_PASSWORD, organizationName: 'Signed Up' };
    expect((await this.ctx.post(`${AUTH}/request-signup`, { body })).statusCode).toBe(202);
    const message = await this.nthMail(email, (s) => s === 'Confirm your e-mail address', 1);
    const res = await this.ctx.post(`${AUTH}/complete-signup`, {
      body: { token: MailCatcher.tokenFrom(message, '/verify-email/') },
    });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().data.token;
  };

  /** The session a successful SSO or social callback hands over by cookie, collected as the dashboard does. */
  readonly collect = (res: LightMyRequestResponse) => collectHandOff(this.ctx, res);

  /** A whole OIDC sign-in of the IdP's account `hire`, through org A's dispatcher: the callback's response. */
  readonly ssoSignIn = async (): Promise<LightMyRequestResponse> => {
    const started = await this.ctx.post(`${AUTH}/sso/initiate`, { body: { email: OIDC_ADDRESS } });
    expect(started.statusCode, started.body).toBe(200);
    const binding = valueOf(setCookies(started).get('svc_sso_binding'))!;
    const back = await this.idp.login(
      started.json().data.redirectUrl,
      'hire',
      `${this.ctx.config.publicUrl}${AUTH}/sso/callback`,
    );
    return this.ctx.request('GET', `${AUTH}/sso/callback${back.search}`, {
      headers: { cookie: `svc_sso_binding=${encodeURIComponent(binding)}` },
    });
  };

  /** A browser's Microsoft sign-in as `user`: the callback's response. */
  readonly microsoft = (user: SocialUser) => socialSignIn(this.ctx, this.social, 'microsoft', user);
  readonly oauthFailed = (res: LightMyRequestResponse) => {
    expect(res.statusCode, res.body).toBe(302);
    expect(res.headers.location).toBe(`${this.appUrl}/login?error=oauth_failed`);
    expect(setCookies(res).has('svc_oauth_token')).toBe(false);
  };

  readonly accept = (token: string, body?: Record<string, unknown>, bearer?: string) =>
    this.ctx.post(acceptUrl(token), { ...(body ? { body } : {}), ...(bearer ? { token: bearer } : {}) });

  readonly account = async (email: string) =>
    (await this.ctx.db.db.select().from(users).where(eq(users.email, email)))[0]!;

  readonly me = async (token: string) => {
    const res = await this.ctx.get(`${AUTH}/me`, { token });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data as {
      user: { id: string; name: string; email: string };
      role: Role;
      organization: { id: string };
    };
  };

  readonly orgIds = async (token: string): Promise<string[]> => {
    const res = await this.ctx.get(`${AUTH}/me/orgs`, { token });
    expect(res.statusCode, res.body).toBe(200);
    return (res.json().data as { organizationId: string }[]).map((o) => o.organizationId).sort();
  };

  readonly passwordLogin = (email: string, password: string) =>
    this.ctx.post(`${AUTH}/login`, { body: { email, password } });

  /** The invitation is still pending: validate says valid and the inviter's list shows it. */
  readonly stillPending = async (owner: Registered, token: string, email: string) => {
    expect((await this.ctx.get(validateUrl(token))).json().data).toMatchObject({ valid: true });
    const listed = await this.ctx.get(INVITES, { token: owner.token });
    expect((listed.json().data as { email: string }[]).map((i) => i.email)).toContain(email);
  };

  /**
   * The mailbox's holder claims the unproven account with the e-mailed token: a session in the inviting
   * organization, their name, a proven address, no TOTP and no link left from whoever made the account.
   */
  readonly claim = async (owner: Registered, token: string, email: string, role: Role, name: string) => {
    const res = await this.accept(token, { name, password: CLAIMED_PASSWORD });
    expect(res.statusCode, res.body).toBe(200);
    const data = res.json().data;
    expect(data).toMatchObject({
      token: expect.any(String),
      user: { email, name, mfaEnabled: false },
      organization: { id: owner.organization.id },
      role,
    });
    expect(await this.me(data.token)).toMatchObject({ role, organization: { id: owner.organization.id } });
    const stored = await this.account(email);
    expect(stored).toMatchObject({
      name,
      mfaEnabled: false,
      mfaSecretEncrypted: null,
      ssoId: null,
      originOrganizationId: null,
      emailVerifiedVia: 'invitation',
    });
    expect(stored.emailVerifiedAt).toEqual(this.ctx.clock.now());
    const [entry] = await auditEntries(this.ctx, owner.token, 'team.invite.accepted');
    expect(entry).toMatchObject({
      userId: stored.id,
      metadata: { email, role, newUser: false, claimed: true },
    });
    expect((await this.ctx.get(validateUrl(token))).json().data).toEqual({ valid: false, reason: 'used' });
    // The maker's password is gone; the chosen one signs in without a second factor.
    expectErrorEnvelope(await this.passwordLogin(email, TEST_PASSWORD), 401, 'INVALID_CREDENTIALS');
    const login = await this.passwordLogin(email, CLAIMED_PASSWORD);
    expect(login.statusCode, login.body).toBe(200);
    expect(login.json().data).not.toHaveProperty('mfaRequired');
    expect((await this.me(login.json().data.token)).user).toMatchObject({ id: stored.id, name });
    return { session: data.token as string, userId: stored.id };
  };

  async start(): Promise<void> {
    this.dns = await this.open(TestDns.start(), (dns) => dns.stop());
    this.mail = await this.open(MailCatcher.start(), (mail) => mail.stop());
    this.social = await this.open(LocalOAuthProvider.start(), (social) => social.close());
    const publicUrl = 'http://gov.test';
    this.idp = await this.open(
      OidcIdp.start({
        redirectUri: `${publicUrl}/api/v1/auth/sso/callback`,
        accounts: { hire: { email: 'New.Hire@' + OIDC_DOMAIN, email_verified: true, name: 'IdP Made' } },
      }),
      (idp) => idp.close(),
    );
    this.ctx = await this.openApp({
      config: {
        smtpUrl: this.mail.url,
        ssoAllowInsecureHttp: true,
        ssoAllowPrivateNetworks: true,
        ssoDnsServers: [this.dns.address],
        oauthProviders: { github: null, google: null, microsoft: this.social.settings('microsoft') },
      },
    });
    expect(this.ctx.config.publicUrl).toBe(publicUrl);
    this.appUrl = this.ctx.config.appUrl;
  }
}

/** An invitation takeover suite, registered in the calling `describe`. */
export const invitationTakeoverSuite = () => useSuite(new InvitationTakeoverSuite());
