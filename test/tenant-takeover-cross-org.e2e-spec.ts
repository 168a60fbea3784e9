import { describe, expect, it } from 'vitest';
import { TEST_PASSWORD } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';
import { auditEntries } from './support/audit-entries.js';
import { MailCatcher } from './support/mail-catcher.js';
import { AUTH, mfaHelpers } from './support/mfa-suite.js';
import { member, teamHelpers } from './support/team-suite.js';
import { claimsOf, tenantTakeoverSuite } from './support/tenant-takeover-suite.js';

/**
 * Account and tenant takeover guards across organizations (issue 29). Finding 5: an SSO session of an account A did
 * not create reaches A only (its sessions, login activity and revocations; account-wide changes refused). Finding 7:
 * what an organization learns of a member's other organizations (last login address, failed logins, password
 * resets). Guards at sign-in: tenant-takeover-sign-in.
 */
describe('account and tenant takeover guards (issue 29: findings 2, 3, 5 and 7)', () => {
  const s = tenantTakeoverSuite();
  const {
    joinLater,
    personInAandB,
    sharedPerson,
    idpOnlyPerson,
    signIn,
    collect,
    sessionIds,
    switchTo,
    auditAbout,
  } = s;
  const { code, nextStep, tempTokenFor, mfaLogin } = mfaHelpers(() => s.ctx);
  const { members } = teamHelpers(() => s.ctx);

  describe('finding 5: an SSO session of an account A did not create reaches A only', () => {
    it('lists only A’s sessions and login activity', async () => {
      const { ctx, acme } = s;
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
      const { ctx, acme } = s;
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
      const { ctx, acme } = s;
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
      const { ctx } = s;
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
      s.ctx.app.inject({
        method: 'POST',
        url: `${AUTH}/login`,
        remoteAddress: ip,
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify({ email, password: TEST_PASSWORD }),
      });
    const lastLoginIp = async (ownerToken: string, userId: string) =>
      (await members(ownerToken)).find((m) => m.userId === userId)!.lastLoginIp;

    it('shows in each organization’s member list the address of the last login into that organization', async () => {
      const { ctx } = s;
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
      const { ctx } = s;
      const { a, b, person, secret } = await personInAandB();
      const wrong = await ctx.post(`${AUTH}/login`, {
        body: { email: person.email, password: 'Wrong-Password-1' },
      });
      expectErrorEnvelope(wrong, 401, 'INVALID_CREDENTIALS');
      expect(await auditEntries(ctx, a.token, 'auth.login_failed')).toEqual([]);
      expect(await auditEntries(ctx, b.token, 'auth.login_failed')).toEqual([]);
      // The account itself still sees the attempt.
      const activity = (await ctx.get(`${AUTH}/login-activity`, { token: person.token })).json().data;
      expect(activity).toEqual(
        expect.arrayContaining([expect.objectContaining({ method: 'password', success: false })]),
      );

      const tempToken = await tempTokenFor(person.email);
      const bad = String((Number(code(secret)) + 1) % 1_000_000).padStart(6, '0');
      expectErrorEnvelope(await mfaLogin(tempToken, bad), 401, 'INVALID_MFA_CODE');
      const inA = await auditEntries(ctx, a.token, 'auth.login_failed');
      expect(inA).toEqual([
        expect.objectContaining({
          userId: person.userId,
          metadata: { method: 'password', reason: 'invalid_mfa_code' },
        }),
      ]);
      expect(await auditEntries(ctx, b.token, 'auth.login_failed')).toEqual([]);
      expect((await mfaLogin(tempToken, code(secret))).statusCode).toBe(200);
      nextStep();
    });

    it('writes auth.password_reset into every organization where the user is an active member', async () => {
      const { ctx, mail } = s;
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
