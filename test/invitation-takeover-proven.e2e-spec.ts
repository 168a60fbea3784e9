import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { invitations } from '../libs/identity/src/team/invitation.schema.js';
import { TEST_PASSWORD, uniqueEmail } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';
import { auditEntries } from './support/audit-entries.js';
import { fullWidth, invitationTakeoverSuite, validateUrl } from './support/invitation-takeover-suite.js';
import { AUTH, mfaHelpers } from './support/mfa-suite.js';

/**
 * An invitation into an account whose address was proven (by a magic link, a confirmed sign-up or a first
 * invitation): it joins only with its own session or password, through its TOTP when it has one; and invitation
 * addresses in compatibility forms (NFKC) reach that account and no look-alike. Unproven accounts claimed by the
 * invitee: invitation-takeover-claim.
 */
describe('invitation into an account whose address was never proven (register-then-invite takeover)', () => {
  const s = invitationTakeoverSuite();
  const { newOrg, invite, proveByMagicLink, completeSignup, accept, account, me, orgIds, stillPending } = s;
  const { setup, code, nextStep, mfaLogin } = mfaHelpers(() => s.ctx);

  describe('an account whose address was proven joins only with its own credentials', () => {
    it('joins with its own session (address proven by a magic link), keeping its organizations and sessions', async () => {
      const { ctx } = s;
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
      const [entry] = await auditEntries(ctx, inviter.token, 'team.invite.accepted');
      expect(entry!.metadata).toMatchObject({ email, role: 'admin', newUser: false, claimed: false });
    });

    it('refuses nobody, a wrong password, another account’s or a broken JWT, then joins with the password', async () => {
      const { ctx } = s;
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
      const { ctx } = s;
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
      const [entry] = await auditEntries(ctx, second.token, 'team.invite.accepted');
      expect(entry!.metadata).toMatchObject({ newUser: false, claimed: false });
      expect(await account(email)).toMatchObject({ mfaEnabled: true, name: 'Max Factor' });
    });
  });

  describe('addresses in compatibility forms (NFKC)', () => {
    it('stores a full-width invitation address normalised, so it reaches the existing account and no look-alike', async () => {
      const { ctx, mail } = s;
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
      const { ctx } = s;
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
