import { and, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { sessions } from '../libs/identity/src/sessions/session.schema.js';
import { TEST_PASSWORD, uniqueEmail } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';
import { cookieValue as valueOf, setCookies } from './support/cookies.js';
import { AUTH, mfaHelpers } from './support/mfa-suite.js';
import { patchOp, scimClient, scimUser } from './support/scim.js';
import { member, teamHelpers } from './support/team-suite.js';
import {
  claimsOf,
  SSO,
  SSO_DOMAIN,
  TOKEN_API,
  tenantTakeoverSuite,
} from './support/tenant-takeover-suite.js';

/**
 * Account and tenant takeover guards at sign-in (issue 29). Finding 2: an MFA login finishes in the organization it
 * was started for, or not at all, and an SSO session of A enrols no TOTP on a shared account. Finding 3: only an
 * owner connects the organization to an identity provider, and the IdP the owner configured still sends the owner
 * through TOTP. What an SSO session and an organization reach of other organizations: tenant-takeover-cross-org.
 */
describe('account and tenant takeover guards (issue 29: findings 2, 3, 5 and 7)', () => {
  const s = tenantTakeoverSuite();
  const { enableTotp, personInAandB, sharedPerson, idpOnlyPerson, signIn, collect, auditAbout } = s;
  const { code, nextStep, tempTokenFor, mfaLogin } = mfaHelpers(() => s.ctx);
  const { members } = teamHelpers(() => s.ctx);

  describe('finding 2: an MFA login finishes in the organization it was started for, or not at all', () => {
    it('refuses the code with 401 ACCOUNT_DEACTIVATED once A suspended the person, recorded in A, with no session in B', async () => {
      const { ctx } = s;
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
      const { ctx } = s;
      const { a, person, secret } = await personInAandB();
      const tempToken = await tempTokenFor(person.email);
      const removed = await ctx.delete(member(person.userId), { token: a.token });
      expect(removed.statusCode, removed.body).toBe(200);
      const res = await mfaLogin(tempToken, code(secret));
      expectErrorEnvelope(res, 401, 'ACCOUNT_DEACTIVATED');
      expect(res.body).not.toMatch(/eyJ/);
    });

    it('opens the session in the tempToken’s organization while both memberships are active', async () => {
      const { ctx } = s;
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
      const { ctx, acme } = s;
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
      const { ctx, idp, acme, scimToken } = s;
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
      const { ctx, acme, scimToken } = s;
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
      const { ctx, acme, appUrl } = s;
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
      const { ctx, acme } = s;
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
});
