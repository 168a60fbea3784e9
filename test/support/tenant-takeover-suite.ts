import type { LightMyRequestResponse } from 'fastify';
import jwt from 'jsonwebtoken';
import { expect } from 'vitest';
import { memberships } from '../../libs/identity/src/organizations/organization.schema.js';
import { newId, type Role } from '#platform';
import { type Registered, TestContext } from './app.js';
import { auditEntries } from './audit-entries.js';
import { cookieValue as valueOf, setCookies } from './cookies.js';
import { MailCatcher } from './mail-catcher.js';
import { AUTH, mfaHelpers } from './mfa-suite.js';
import { type IdpAccount, OidcIdp } from './oidc-idp.js';
import { collectHandOff } from './sign-in.js';
import { verifySsoDomains } from './sso-domains.js';
import { SuiteFixture, useSuite } from './suite.js';
import { TestDns } from './test-dns.js';

const INITIATE = '/api/v1/auth/sso/initiate';
const CALLBACK = '/api/v1/auth/sso/callback';
export const SSO = '/api/v1/sso/config';
export const TOKEN_API = '/api/v1/sso/scim-token';
export const SSO_DOMAIN = 'acme.example';

export const claimsOf = (token: string) =>
  jwt.decode(token) as { _id: string; organizationId: string; role: string };

/**
 * The tenant takeover suites' world: organization A ("Acme", Enterprise) with OIDC configured for its proven domain
 * and a SCIM token minted by its owner, who has a password and TOTP; an IdP whose accounts the tests add; mail.
 * Its fields are set before the first test (read them inside a test); its helpers may be taken at once.
 */
export class TenantTakeoverSuite extends SuiteFixture {
  ctx!: TestContext;
  dns!: TestDns;
  mail!: MailCatcher;
  idp!: OidcIdp;
  /** Organization A: Enterprise, OIDC configured and SCIM token minted by its owner, who has a password and TOTP. */
  acme!: Registered & { secret: string };
  scimToken!: string;
  redirectUri!: string;
  appUrl!: string;
  /** The IdP's accounts, read at each sign-in: a test adds the people it needs. */
  readonly accounts: Record<string, IdpAccount> = {};
  private people = 0;
  private readonly mfa = mfaHelpers(() => this.ctx);

  /** Switches TOTP on with the given (password) session; the clock is left one step past the code used. */
  readonly enableTotp = async (token: string): Promise<string> => {
    const { secret } = await this.mfa.setup(token);
    const res = await this.ctx.post(`${AUTH}/mfa/enable`, { token, body: { code: this.mfa.code(secret) } });
    expect(res.statusCode, res.body).toBe(200);
    this.mfa.nextStep();
    return secret;
  };

  /** A membership joined after every existing one, so that a password login keeps picking the older one. */
  readonly joinLater = async (
    organizationId: string,
    userId: string,
    role: Role = 'member',
  ): Promise<void> => {
    const at = new Date(this.ctx.clock.nowMs() + 60_000);
    await this.ctx.db.db
      .insert(memberships)
      .values({ id: newId(), organizationId, userId, role, isActive: true, createdAt: at, updatedAt: at });
  };

  /** A person with TOTP, member of A (oldest membership: a password login aims at A) and owner of B too. */
  readonly personInAandB = async () => {
    const a = await this.ctx.register({ organizationName: 'Org A' });
    const b = await this.ctx.register({ organizationName: 'Org B' });
    const person = await this.ctx.addMember(a.organization.id, 'member');
    await this.joinLater(b.organization.id, person.userId, 'owner');
    const secret = await this.enableTotp(person.token);
    return { a, b, person, secret };
  };

  /** A password account with its own organization B that A later added as a member; A's IdP knows it. */
  readonly sharedPerson = async () => {
    this.people += 1;
    const key = `shared-${this.people}`;
    const email = `${key}@${SSO_DOMAIN}`;
    const home = await this.ctx.register({ email, name: 'Pat Shared', organizationName: 'Pat’s own' });
    await this.joinLater(this.acme.organization.id, home.user.id);
    this.accounts[key] = { email, email_verified: true, name: 'Pat at the IdP' };
    return { key, email, home };
  };

  /** An address A's IdP knows and the service does not: its first SSO sign-in provisions it in A. */
  readonly idpOnlyPerson = (): string => {
    this.people += 1;
    const key = `own-${this.people}`;
    this.accounts[key] = { email: `${key}@${SSO_DOMAIN}`, email_verified: true, name: 'Sam Provisioned' };
    return key;
  };

  /** A whole OIDC sign-in of the IdP account `key`, as a browser plays it: the callback's response. */
  readonly signIn = async (key: string): Promise<LightMyRequestResponse> => {
    const started = await this.ctx.post(INITIATE, { body: { email: this.accounts[key]!.email } });
    expect(started.statusCode, started.body).toBe(200);
    const binding = valueOf(setCookies(started).get('svc_sso_binding'));
    const back = await this.idp.login(started.json().data.redirectUrl, key, this.redirectUri);
    return this.ctx.request('GET', `${CALLBACK}${back.search}`, {
      headers: { cookie: `svc_sso_binding=${encodeURIComponent(binding!)}` },
    });
  };

  /** The session a successful SSO or social callback hands over by cookie, collected as the dashboard does. */
  readonly collect = (res: LightMyRequestResponse) => collectHandOff(this.ctx, res);

  readonly sessionIds = async (token: string): Promise<{ all: string[]; current: string }> => {
    const res = await this.ctx.get(`${AUTH}/sessions`, { token });
    expect(res.statusCode, res.body).toBe(200);
    const list = res.json().data as { sessionId: string; current: boolean }[];
    return { all: list.map((s) => s.sessionId).sort(), current: list.find((s) => s.current)!.sessionId };
  };

  readonly switchTo = async (token: string, organizationId: string): Promise<string> => {
    const res = await this.ctx.post(`${AUTH}/switch-org`, { token, body: { organizationId } });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data.token;
  };

  /** The organization's entries of one type about `userId`, read by its owner over the API. */
  readonly auditAbout = async (ownerToken: string, eventType: string, userId: string) =>
    (await auditEntries(this.ctx, ownerToken, eventType)).filter(
      (e) => e.userId === userId || e.targetId === userId,
    );

  async start(): Promise<void> {
    this.dns = await this.open(TestDns.start(), (dns) => dns.stop());
    this.mail = await this.open(MailCatcher.start(), (mail) => mail.stop());
    const ctx = await this.openApp({
      config: {
        smtpUrl: this.mail.url,
        ssoAllowInsecureHttp: true,
        ssoAllowPrivateNetworks: true,
        ssoDnsServers: [this.dns.address],
      },
    });
    this.ctx = ctx;
    this.redirectUri = `${ctx.config.publicUrl}/api/v1/auth/sso/callback`;
    this.appUrl = ctx.config.appUrl;
    this.idp = await this.open(
      OidcIdp.start({ redirectUri: this.redirectUri, accounts: this.accounts }),
      (idp) => idp.close(),
    );
    const owner = await ctx.register({
      email: `olive@${SSO_DOMAIN}`,
      name: 'Olive Owner',
      organizationName: 'Acme',
    });
    this.accounts.olive = { email: `olive@${SSO_DOMAIN}`, email_verified: true, name: 'Olive at the IdP' };
    await ctx.setPlan(owner.organization.id, 'enterprise');
    const put = await ctx.request('PUT', SSO, {
      token: owner.token,
      body: {
        provider: 'oidc',
        emailDomains: [SSO_DOMAIN],
        roleMappingRules: [{ pattern: '^gov-admins$', role: 'admin' }],
        oidc: { issuer: this.idp.issuer, clientId: this.idp.clientId, clientSecret: this.idp.clientSecret },
      },
    });
    expect(put.statusCode, put.body).toBe(200);
    // The domain routes sign-in and provisioning only once its TXT record proves it.
    await verifySsoDomains(ctx, owner.token, this.dns);
    const minted = await ctx.post(TOKEN_API, { token: owner.token });
    expect(minted.statusCode, minted.body).toBe(200);
    this.scimToken = minted.json().data.token;
    this.acme = { ...owner, secret: await this.enableTotp(owner.token) };
  }
}

/** A tenant takeover suite, registered in the calling `describe`. */
export const tenantTakeoverSuite = () => useSuite(new TenantTakeoverSuite());
