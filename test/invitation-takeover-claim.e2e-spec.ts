import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { users } from '../libs/identity/src/users/user.schema.js';
import { TEST_PASSWORD, uniqueEmail } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';
import {
  CLAIMED_PASSWORD,
  invitationTakeoverSuite,
  OIDC_ADDRESS,
  OIDC_DOMAIN,
} from './support/invitation-takeover-suite.js';
import { AUTH, mfaHelpers } from './support/mfa-suite.js';
import type { SocialUser } from './support/oauth-provider.js';
import { expectScimError, patchOp, scimOrganization, scimUser } from './support/scim.js';
import { verifySsoDomains } from './support/sso-domains.js';

/**
 * An invitation into an account whose address nobody proved: the account registered and locked with TOTP, made by
 * SCIM, provisioned by an OIDC IdP or signed up with Microsoft, and then claimed by the invitee with the e-mailed
 * token; the maker's sessions, password, TOTP and links are gone. Accounts whose address was proven:
 * invitation-takeover-proven.
 */
describe('invitation into an account whose address was never proven (register-then-invite takeover)', () => {
  const s = invitationTakeoverSuite();
  const {
    newOrg,
    invite,
    collect,
    ssoSignIn,
    microsoft,
    oauthFailed,
    accept,
    account,
    me,
    orgIds,
    passwordLogin,
    stillPending,
    claim,
  } = s;
  const { setup, code, nextStep } = mfaHelpers(() => s.ctx);

  describe('register, enrol TOTP, wait for the invitation', () => {
    it('lets the invitee take the account: the maker’s sessions, password and TOTP are gone', async () => {
      const { ctx } = s;
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
      const { ctx } = s;
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
      const { ctx } = s;
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
      const { ctx, dns, idp } = s;
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
      const { ctx } = s;
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
});
