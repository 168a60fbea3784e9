import { and, eq } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import jwt from 'jsonwebtoken';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId, type Role } from '#platform';
import { memberships } from '../libs/identity/src/organizations/organization.schema.js';
import { sessions } from '../libs/identity/src/sessions/session.schema.js';
import { type Registered, TEST_PASSWORD, TestContext, uniqueEmail } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';
import { cookieValue as valueOf, setCookies } from './support/cookies.js';
import { MailCatcher } from './support/mail-catcher.js';
import { AUTH, mfaHelpers } from './support/mfa-suite.js';
import { type IdpAccount, OidcIdp } from './support/oidc-idp.js';
import { patchOp, scimClient, scimUser } from './support/scim.js';
import { verifySsoDomains } from './support/sso-domains.js';
import { member, teamHelpers } from './support/team-suite.js';
import { collectHandOff } from './support/sign-in.js';
import { TestDns } from './support/test-dns.js';

const INITIATE = '/api/v1/auth/sso/initiate';
const CALLBACK = '/api/v1/auth/sso/callback';
const SSO = '/api/v1/sso/config';
const TOKEN_API = '/api/v1/sso/scim-token';
const SSO_DOMAIN = 'acme.example';

const claimsOf = (token: string) =>
  jwt.decode(token) as { _id: string; organizationId: string; role: string };

describe('account and tenant takeover guards (issue 29: findings 2, 3, 5 and 7)', () => {
  let ctx: TestContext;
  let dns: TestDns;
  let mail: MailCatcher;
  let idp: OidcIdp;
  /** Organization A: Enterprise, OIDC configured and SCIM token minted by its owner, who has a password and TOTP. */
  let acme: Registered & { secret: string };
  let scimToken: string;
  let redirectUri: string;
  let appUrl: string;
  /** The IdP's accounts, read at each sign-in: a test adds the people it needs. */
  const accounts: Record<string, IdpAccount> = {};
  let people = 0;

  const { code, nextStep, setup, tempTokenFor, mfaLogin } = mfaHelpers(() => ctx);
  const { members, auditEntries } = teamHelpers(() => ctx);

  /** Switches TOTP on with the given (password) session; the clock is left one step past the code used. */
  async function enableTotp(token: string): Promise<string> {
    const { secret } = await setup(token);
    const res = await ctx.post(`${AUTH}/mfa/enable`, { token, body: { code: code(secret) } });
    expect(res.statusCode, res.body).toBe(200);
    nextStep();
    return secret;
  }

  /** A membership joined after every existing one, so that a password login keeps picking the older one. */
  async function joinLater(organizationId: string, userId: string, role: Role = 'member'): Promise<void> {
    const at = new Date(ctx.clock.nowMs() + 60_000);
    await ctx.db.db
      .insert(memberships)
      .values({ id: newId(), organizationId, userId, role, isActive: true, createdAt: at, updatedAt: at });
  }

  /** A person with TOTP, member of A (oldest membership: a password login aims at A) and owner of B too. */
  async function personInAandB() {
    const a = await ctx.register({ organizationName: 'Org A' });
    const b = await ctx.register({ organizationName: 'Org B' });
    const person = await ctx.addMember(a.organization.id, 'member');
    await joinLater(b.organization.id, person.userId, 'owner');
    const secret = await enableTotp(person.token);
    return { a, b, person, secret };
  }

  /** A password account with its own organization B that A later added as a member; A's IdP knows it. */
  async function sharedPerson() {
    people += 1;
    const key = `shared-${people}`;
    const email = `${key}@${SSO_DOMAIN}`;
    const home = await ctx.register({ email, name: 'Pat Shared', organizationName: 'Pat’s own' });
    await joinLater(acme.organization.id, home.user.id);
    accounts[key] = { email, email_verified: true, name: 'Pat at the IdP' };
    return { key, email, home };
  }

  /** An address A's IdP knows and the service does not: its first SSO sign-in provisions it in A. */
  function idpOnlyPerson(): string {
    people += 1;
    const key = `own-${people}`;
    accounts[key] = { email: `${key}@${SSO_DOMAIN}`, email_verified: true, name: 'Sam Provisioned' };
    return key;
  }

  /** A whole OIDC sign-in of the IdP account `key`, as a browser plays it: the callback's response. */
  async function signIn(key: string): Promise<LightMyRequestResponse> {
    const started = await ctx.post(INITIATE, { body: { email: accounts[key]!.email } });
    expect(started.statusCode, started.body).toBe(200);
    const binding = valueOf(setCookies(started).get('svc_sso_binding'));
    const back = await idp.login(started.json().data.redirectUrl, key, redirectUri);
    return ctx.request('GET', `${CALLBACK}${back.search}`, {
      headers: { cookie: `svc_sso_binding=${encodeURIComponent(binding!)}` },
    });
  }

  /** The session a successful SSO or social callback hands over by cookie, collected as the dashboard does. */
  const collect = (res: LightMyRequestResponse) => collectHandOff(ctx, res);

  async function sessionIds(token: string): Promise<{ all: string[]; current: string }> {
    const res = await ctx.get(`${AUTH}/sessions`, { token });
    expect(res.statusCode, res.body).toBe(200);
    const list = res.json().data as { sessionId: string; current: boolean }[];
    return { all: list.map((s) => s.sessionId).sort(), current: list.find((s) => s.current)!.sessionId };
  }

  async function switchTo(token: string, organizationId: string): Promise<string> {
    const res = await ctx.post(`${AUTH}/switch-org`, { token, body: { organizationId } });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data.token;
  }

  /** The organization's entries of one type about `userId`, read by its owner over the API. */
  const auditAbout = async (ownerToken: string, eventType: string, userId: string) =>
    (await auditEntries(ownerToken, eventType)).filter((e) => e.userId === userId || e.targetId === userId);

  beforeAll(async () => {
    dns = await TestDns.start();
    mail = await MailCatcher.start();
    ctx = await TestContext.create({
      config: {
        smtpUrl: mail.url,
        ssoAllowInsecureHttp: true,
        ssoAllowPrivateNetworks: true,
        ssoDnsServers: [dns.address],
      },
    });
    redirectUri = `${ctx.config.publicUrl}/api/v1/auth/sso/callback`;
    appUrl = ctx.config.appUrl;
    idp = await OidcIdp.start({ redirectUri, accounts });
    const owner = await ctx.register({
      email: `olive@${SSO_DOMAIN}`,
      name: 'Olive Owner',
      organizationName: 'Acme',
    });
    accounts.olive = { email: `olive@${SSO_DOMAIN}`, email_verified: true, name: 'Olive at the IdP' };
    await ctx.setPlan(owner.organization.id, 'enterprise');
    const put = await ctx.request('PUT', SSO, {
      token: owner.token,
      body: {
        provider: 'oidc',
        emailDomains: [SSO_DOMAIN],
        roleMappingRules: [{ pattern: '^gov-admins$', role: 'admin' }],
        oidc: { issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret },
      },
    });
    expect(put.statusCode, put.body).toBe(200);
    // The domain routes sign-in and provisioning only once its TXT record proves it.
    await verifySsoDomains(ctx, owner.token, dns);
    const minted = await ctx.post(TOKEN_API, { token: owner.token });
    expect(minted.statusCode, minted.body).toBe(200);
    scimToken = minted.json().data.token;
    acme = { ...owner, secret: await enableTotp(owner.token) };
  });
  afterAll(async () => {
    await ctx?.close();
    await idp?.close();
    await dns?.stop();
    await mail?.stop();
  });

  describe('finding 2: an MFA login finishes in the organization it was started for, or not at all', () => {
    it('refuses the code with 401 ACCOUNT_DEACTIVATED once A suspended the person, recorded in A, with no session in B', async () => {
      const { a, b, person, secret } = await personInAandB();
      const tempToken = await tempTokenFor(person.email);
      expect(claimsOf(tempToken).organizationId).toBe(a.organization.id);
      const suspended = await ctx.patch(`${member(person.userId)}/status`, {
        token: a.token,
        body: { isActive: false },
      });
      expect(suspended.statusCode, suspended.body).toBe(200);

      const res = await mfaLogin(tempToken, code(secret));
      expectErrorEnvelope(res, 401, 'ACCOUNT_DEACTIVATED');
      expect(res.body).not.toMatch(/eyJ/);
      const inB = await ctx.db.db
        .select()
        .from(sessions)
        .where(and(eq(sessions.userId, person.userId), eq(sessions.organizationId, b.organization.id)));
      expect(inB).toEqual([]);
      expect(await auditAbout(b.token, 'auth.login', person.userId)).toEqual([]);
      expect(await auditAbout(b.token, 'auth.login_failed', person.userId)).toEqual([]);
      const refused = await auditAbout(a.token, 'auth.login_failed', person.userId);
      expect(refused).toEqual([
        expect.objectContaining({ metadata: expect.objectContaining({ reason: 'deactivated' }) }),
      ]);

      // The person signs in to B on purpose: a new login aims at B, and the code opens a session there.
      nextStep();
      const again = await tempTokenFor(person.email);
      expect(claimsOf(again).organizationId).toBe(b.organization.id);
      const ok = await mfaLogin(again, code(secret));
      expect(ok.statusCode, ok.body).toBe(200);
      expect(claimsOf(ok.json().data.token)).toMatchObject({
        organizationId: b.organization.id,
        role: 'owner',
      });
    });

    it('refuses the code with 401 ACCOUNT_DEACTIVATED once A removed the person', async () => {
      const { a, person, secret } = await personInAandB();
      const tempToken = await tempTokenFor(person.email);
      const removed = await ctx.delete(member(person.userId), { token: a.token });
      expect(removed.statusCode, removed.body).toBe(200);
      const res = await mfaLogin(tempToken, code(secret));
      expectErrorEnvelope(res, 401, 'ACCOUNT_DEACTIVATED');
      expect(res.body).not.toMatch(/eyJ/);
    });

    it('opens the session in the tempToken’s organization while both memberships are active', async () => {
      const { a, person, secret } = await personInAandB();
      const res = await mfaLogin(await tempTokenFor(person.email), code(secret));
      expect(res.statusCode, res.body).toBe(200);
      const token = res.json().data.token as string;
      expect(claimsOf(token)).toMatchObject({
        _id: person.userId,
        organizationId: a.organization.id,
        role: 'member',
      });
      expect((await ctx.get(`${AUTH}/me`, { token })).statusCode).toBe(200);
      nextStep();
    });

    it('keeps an SSO session of A from enrolling TOTP on a shared account or reaching its organization B', async () => {
      const { key, home } = await sharedPerson();
      const token = await collect(await signIn(key));
      expect(claimsOf(token)).toMatchObject({ _id: home.user.id, organizationId: acme.organization.id });
      expectErrorEnvelope(await ctx.post(`${AUTH}/mfa/setup`, { token }), 403, 'REAUTHENTICATION_REQUIRED');
      expectErrorEnvelope(
        await ctx.post(`${AUTH}/mfa/enable`, { token, body: { code: '123456' } }),
        403,
        'REAUTHENTICATION_REQUIRED',
      );
      expectErrorEnvelope(
        await ctx.post(`${AUTH}/switch-org`, { token, body: { organizationId: home.organization.id } }),
        403,
        'FORBIDDEN',
      );

      // Nothing was enrolled: the person's password still opens their own organization, and they can set up TOTP.
      const login = await ctx.post(`${AUTH}/login`, {
        body: { email: home.user.email, password: TEST_PASSWORD },
      });
      expect(login.statusCode, login.body).toBe(200);
      expect(login.json().data).not.toHaveProperty('mfaRequired');
      const own = login.json().data.token as string;
      expect(claimsOf(own)).toMatchObject({ organizationId: home.organization.id, role: 'owner' });
      expect(login.json().data.user.mfaEnabled).toBe(false);
      expect((await ctx.post(`${AUTH}/mfa/setup`, { token: own })).statusCode).toBe(200);
    });
  });

  describe('finding 3: only an owner connects the organization to an identity provider', () => {
    it('refuses an admin the writes of the SCIM token and the SSO configuration, and lets them read both', async () => {
      const admin = await ctx.addMember(acme.organization.id, 'admin');
      const before = (await ctx.get(SSO, { token: acme.token })).json().data;
      expectErrorEnvelope(await ctx.post(TOKEN_API, { token: admin.token }), 403, 'FORBIDDEN');
      expectErrorEnvelope(await ctx.delete(TOKEN_API, { token: admin.token }), 403, 'FORBIDDEN');
      const hostile = {
        provider: 'oidc',
        emailDomains: [SSO_DOMAIN],
        roleMappingRules: [{ pattern: '.*', role: 'admin' }],
        oidc: { issuer: idp.issuer, clientId: idp.clientId },
      };
      expectErrorEnvelope(
        await ctx.request('PUT', SSO, { token: admin.token, body: hostile }),
        403,
        'FORBIDDEN',
      );
      expectErrorEnvelope(await ctx.delete(SSO, { token: admin.token }), 403, 'FORBIDDEN');

      const status = await ctx.get(TOKEN_API, { token: admin.token });
      expect(status.statusCode, status.body).toBe(200);
      expect(status.json().data.exists).toBe(true);
      const config = await ctx.get(SSO, { token: admin.token });
      expect(config.statusCode, config.body).toBe(200);
      expect(config.json().data).toEqual(before);
      // The owner's token and configuration are untouched.
      expect((await scimClient(ctx, () => scimToken).get('/Users')).statusCode).toBe(200);
      expect((await ctx.get(SSO, { token: acme.token })).json().data).toEqual(before);
    });

    it('keeps the owner’s SCIM token working, and it may move a user into the owner group', async () => {
      const client = scimClient(ctx, () => scimToken);
      const userName = uniqueEmail('scim-owner');
      const created = await client.post('/Users', scimUser(userName));
      expect(created.statusCode, created.body).toBe(201);
      const id = created.json().id as string;
      const moved = await client.patch(
        '/Groups/owner',
        patchOp({ op: 'add', path: 'members', value: [{ value: id }] }),
      );
      expect(moved.statusCode, moved.body).toBe(204);
      expect((await client.get(`/Users/${id}`)).json().groups[0].value).toBe('owner');
      const listed = (await members(acme.token)).find((m) => m.email === userName);
      expect(listed).toMatchObject({ role: 'owner', isActive: true });
    });

    it('sends the owner through their TOTP when the IdP the owner configured signs them in', async () => {
      const res = await signIn('olive');
      expect(res.statusCode, res.body).toBe(302);
      expect(res.headers.location).toBe(`${appUrl}/login?ssoMfa=1`);
      const cookies = setCookies(res);
      expect(cookies.has('svc_oauth_token')).toBe(false);
      const handOff = valueOf(cookies.get('svc_sso_mfa'));
      expect(handOff).toBeTruthy();
      const exchanged = await ctx.get(`${AUTH}/sso/mfa-exchange`, {
        headers: { cookie: `svc_sso_mfa=${encodeURIComponent(handOff!)}` },
      });
      expect(exchanged.statusCode, exchanged.body).toBe(200);
      const tempToken = exchanged.json().data.tempToken as string;
      const bad = String((Number(code(acme.secret)) + 1) % 1_000_000).padStart(6, '0');
      expectErrorEnvelope(await mfaLogin(tempToken, bad), 401, 'INVALID_MFA_CODE');
      const login = await mfaLogin(tempToken, code(acme.secret));
      expect(login.statusCode, login.body).toBe(200);
      expect(claimsOf(login.json().data.token)).toMatchObject({
        _id: acme.user.id,
        organizationId: acme.organization.id,
        role: 'owner',
      });
      nextStep();
    });

    it('signs in an account the organization’s SSO provisioned without the TOTP step, TOTP on or not', async () => {
      const key = idpOnlyPerson();
      const first = await collect(await signIn(key));
      // Its own account: it may enrol TOTP from its SSO session.
      await enableTotp(first);
      const again = await collect(await signIn(key));
      expect(claimsOf(again)).toMatchObject({
        _id: claimsOf(first)._id,
        organizationId: acme.organization.id,
      });
      expect((await ctx.get(`${AUTH}/me`, { token: again })).json().data.user.mfaEnabled).toBe(true);
    });
  });

  describe('finding 5: an SSO session of an account A did not create reaches A only', () => {
    it('lists only A’s sessions and login activity', async () => {
      const { key, home } = await sharedPerson();
      const inB = await ctx.login(home.user.email);
      const inA = await switchTo(inB, acme.organization.id);
      const sso = await collect(await signIn(key));
      const b = await sessionIds(inB);
      const aPassword = (await sessionIds(inA)).current;
      const scoped = await sessionIds(sso);
      expect(scoped.all).toEqual([aPassword, scoped.current].sort());
      expect(scoped.all).not.toContain(b.current);
      // The password session sees every one: B's registration and login, A's switch and SSO sign-in.
      expect(b.all).toHaveLength(4);
      expect(b.all).toEqual(expect.arrayContaining([b.current, aPassword, scoped.current]));

      const activity = async (token: string) => {
        const res = await ctx.get(`${AUTH}/login-activity`, { token });
        expect(res.statusCode, res.body).toBe(200);
        return (res.json().data as { method: string; success: boolean }[]).map((e) => e.method);
      };
      expect(await activity(sso)).toEqual(['sso']);
      expect(await activity(inB)).toEqual(expect.arrayContaining(['sso', 'password']));

      // Nor does it learn of the person's other organizations.
      const orgs = async (token: string) => {
        const res = await ctx.get(`${AUTH}/me/orgs`, { token });
        expect(res.statusCode, res.body).toBe(200);
        return (res.json().data as { organizationId: string }[]).map((o) => o.organizationId).sort();
      };
      expect(await orgs(sso)).toEqual([acme.organization.id]);
      expect(await orgs(inB)).toEqual([acme.organization.id, home.organization.id].sort());
    });

    it('refuses every account-wide change with 403 REAUTHENTICATION_REQUIRED; the password sessions may make them', async () => {
      const { key, home } = await sharedPerson();
      const inB = await ctx.login(home.user.email);
      const sso = await collect(await signIn(key));
      const changes: [string, string, unknown][] = [
        ['PATCH', `${AUTH}/profile`, { name: 'Renamed by A' }],
        ['PATCH', `${AUTH}/me/preferences`, { theme: 'dark' }],
        ['PATCH', `${AUTH}/me/session-timeout`, { sessionTimeout: '8h' }],
        [
          'POST',
          `${AUTH}/change-password`,
          { currentPassword: TEST_PASSWORD, newPassword: 'Taken-Over-Pass-9' },
        ],
        ['POST', `${AUTH}/mfa/setup`, undefined],
      ];
      // A "switch" into its own organization does not launder the session: the new one is as scoped.
      const laundered = await switchTo(sso, acme.organization.id);
      expectErrorEnvelope(
        await ctx.post(`${AUTH}/switch-org`, {
          token: laundered,
          body: { organizationId: home.organization.id },
        }),
        403,
        'FORBIDDEN',
      );
      for (const [method, url, body] of changes) {
        expectErrorEnvelope(
          await ctx.request(method, url, { token: laundered, body }),
          403,
          'REAUTHENTICATION_REQUIRED',
        );
        expectErrorEnvelope(
          await ctx.request(method, url, { token: sso, body }),
          403,
          'REAUTHENTICATION_REQUIRED',
        );
      }
      const me = (await ctx.get(`${AUTH}/me`, { token: inB })).json().data;
      expect(me.user).toMatchObject({ name: 'Pat Shared', mfaEnabled: false });
      expect((await ctx.get(`${AUTH}/me/preferences`, { token: inB })).json().data).toEqual({});
      expect((await ctx.get(`${AUTH}/me`, { token: sso })).statusCode).toBe(200);

      // The same person's password sessions, in A and in B, make each of them.
      const inA = await switchTo(inB, acme.organization.id);
      for (const [token, [method, url, body]] of [
        [inA, changes[0]!],
        [inA, changes[1]!],
        [inB, changes[2]!],
        [inA, changes[4]!],
        [inB, changes[3]!],
      ] as const) {
        const res = await ctx.request(method, url, { token, body });
        expect(res.statusCode, `${method} ${url}: ${res.body}`).toBe(200);
      }
      expect((await ctx.get(`${AUTH}/me`, { token: inB })).json().data.user.name).toBe('Renamed by A');
      expect(
        (await ctx.post(`${AUTH}/login`, { body: { email: home.user.email, password: 'Taken-Over-Pass-9' } }))
          .statusCode,
      ).toBe(200);
    });

    it('revokes A’s sessions only, and answers 404 for a session in B', async () => {
      const { key, home } = await sharedPerson();
      const inB = await ctx.login(home.user.email);
      const inA = await switchTo(inB, acme.organization.id);
      const sso = await collect(await signIn(key));
      const bSession = (await sessionIds(inB)).current;

      expectErrorEnvelope(
        await ctx.post(`${AUTH}/revoke-session`, { token: sso, body: { sessionId: bSession } }),
        404,
        'NOT_FOUND',
      );
      expect((await ctx.get(`${AUTH}/me`, { token: inB })).statusCode).toBe(200);
      const revoked = await ctx.post(`${AUTH}/revoke-sessions`, { token: sso });
      expect(revoked.statusCode, revoked.body).toBe(200);
      expect(revoked.json().data).toEqual({ revoked: 2 });
      for (const token of [inA, sso]) {
        expectErrorEnvelope(await ctx.get(`${AUTH}/me`, { token }), 401, 'SESSION_REVOKED');
      }
      expect((await ctx.get(`${AUTH}/me`, { token: inB })).statusCode).toBe(200);
      expect((await ctx.get(`${AUTH}/me`, { token: home.token })).statusCode).toBe(200);

      // The password session reaches every organization's sessions.
      const inA2 = await switchTo(inB, acme.organization.id);
      const one = await ctx.post(`${AUTH}/revoke-session`, { token: inA2, body: { sessionId: bSession } });
      expect(one.statusCode, one.body).toBe(200);
      expect(one.json().data).toEqual({ revoked: 1 });
      expectErrorEnvelope(await ctx.get(`${AUTH}/me`, { token: inB }), 401, 'SESSION_REVOKED');
      const all = await ctx.post(`${AUTH}/revoke-sessions`, { token: inA2 });
      expect(all.json().data).toEqual({ revoked: 2 });
      expectErrorEnvelope(await ctx.get(`${AUTH}/me`, { token: home.token }), 401, 'SESSION_REVOKED');
    });

    it('lets an account A’s SSO provisioned change its profile from its SSO session', async () => {
      const sso = await collect(await signIn(idpOnlyPerson()));
      const res = await ctx.patch(`${AUTH}/profile`, { token: sso, body: { name: 'Sam Renamed' } });
      expect(res.statusCode, res.body).toBe(200);
      expect((await ctx.get(`${AUTH}/me`, { token: sso })).json().data.user.name).toBe('Sam Renamed');
      const prefs = await ctx.patch(`${AUTH}/me/preferences`, { token: sso, body: { theme: 'dark' } });
      expect(prefs.statusCode, prefs.body).toBe(200);
    });
  });

  describe('finding 7: what an organization learns of a member’s other organizations', () => {
    const loginFrom = (email: string, ip: string) =>
      ctx.app.inject({
        method: 'POST',
        url: `${AUTH}/login`,
        remoteAddress: ip,
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify({ email, password: TEST_PASSWORD }),
      });
    const lastLoginIp = async (ownerToken: string, userId: string) =>
      (await members(ownerToken)).find((m) => m.userId === userId)!.lastLoginIp;

    it('shows in each organization’s member list the address of the last login into that organization', async () => {
      const a = await ctx.register({ organizationName: 'Org A' });
      const b = await ctx.register({ organizationName: 'Org B' });
      const person = await ctx.addMember(a.organization.id, 'member');
      await joinLater(b.organization.id, person.userId, 'admin');
      const intoA = await loginFrom(person.email, '198.51.100.7');
      expect(intoA.statusCode, intoA.body).toBe(200);
      expect(claimsOf(intoA.json().data.token).organizationId).toBe(a.organization.id);
      expect(await lastLoginIp(a.token, person.userId)).toBe('198.51.100.7');
      expect(await lastLoginIp(b.token, person.userId)).toBeNull();

      // Suspended in A, the person's next login goes into B, from another address.
      const suspended = await ctx.patch(`${member(person.userId)}/status`, {
        token: a.token,
        body: { isActive: false },
      });
      expect(suspended.statusCode, suspended.body).toBe(200);
      const intoB = await loginFrom(person.email, '203.0.113.9');
      expect(intoB.statusCode, intoB.body).toBe(200);
      expect(claimsOf(intoB.json().data.token).organizationId).toBe(b.organization.id);
      expect(await lastLoginIp(b.token, person.userId)).toBe('203.0.113.9');
      expect(await lastLoginIp(a.token, person.userId)).toBe('198.51.100.7');
    });

    it('writes no organization’s audit for a wrong password, and a wrong MFA code into the organization aimed at only', async () => {
      const { a, b, person, secret } = await personInAandB();
      const wrong = await ctx.post(`${AUTH}/login`, {
        body: { email: person.email, password: 'Wrong-Password-1' },
      });
      expectErrorEnvelope(wrong, 401, 'INVALID_CREDENTIALS');
      expect(await auditEntries(a.token, 'auth.login_failed')).toEqual([]);
      expect(await auditEntries(b.token, 'auth.login_failed')).toEqual([]);
      // The account itself still sees the attempt.
      const activity = (await ctx.get(`${AUTH}/login-activity`, { token: person.token })).json().data;
      expect(activity).toEqual(
        expect.arrayContaining([expect.objectContaining({ method: 'password', success: false })]),
      );

      const tempToken = await tempTokenFor(person.email);
      const bad = String((Number(code(secret)) + 1) % 1_000_000).padStart(6, '0');
      expectErrorEnvelope(await mfaLogin(tempToken, bad), 401, 'INVALID_MFA_CODE');
      const inA = await auditEntries(a.token, 'auth.login_failed');
      expect(inA).toEqual([
        expect.objectContaining({
          userId: person.userId,
          metadata: { method: 'password', reason: 'invalid_mfa_code' },
        }),
      ]);
      expect(await auditEntries(b.token, 'auth.login_failed')).toEqual([]);
      expect((await mfaLogin(tempToken, code(secret))).statusCode).toBe(200);
      nextStep();
    });

    it('writes auth.password_reset into every organization where the user is an active member', async () => {
      const a = await ctx.register({ organizationName: 'Org A' });
      const b = await ctx.register({ organizationName: 'Org B' });
      const c = await ctx.register({ organizationName: 'Org C' });
      const person = await ctx.addMember(a.organization.id, 'member');
      await joinLater(b.organization.id, person.userId);
      await joinLater(c.organization.id, person.userId);
      const suspended = await ctx.patch(`${member(person.userId)}/status`, {
        token: c.token,
        body: { isActive: false },
      });
      expect(suspended.statusCode, suspended.body).toBe(200);

      expect((await ctx.post(`${AUTH}/forgot-password`, { body: { email: person.email } })).statusCode).toBe(
        200,
      );
      const token = MailCatcher.tokenFrom(
        await mail.waitFor(person.email, (m) => m.subject === 'Reset your password'),
        '/reset-password/',
      );
      const reset = await ctx.post(`${AUTH}/reset-password`, {
        body: { token, password: 'Brand-New-Pass-7' },
      });
      expect(reset.statusCode, reset.body).toBe(200);
      for (const owner of [a, b]) {
        expect(await auditAbout(owner.token, 'auth.password_reset', person.userId)).toEqual([
          expect.objectContaining({ userId: person.userId, metadata: { sessionsRevoked: 1 } }),
        ]);
      }
      expect(await auditAbout(c.token, 'auth.password_reset', person.userId)).toEqual([]);
      expect(claimsOf(await ctx.login(person.email, 'Brand-New-Pass-7')).organizationId).toBe(
        a.organization.id,
      );
    });
  });
});
