import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { invitations } from '../libs/identity/src/team/invitation.schema.js';
import { memberships } from '../libs/identity/src/organizations/organization.schema.js';
import { users } from '../libs/identity/src/users/user.schema.js';
import { newId, type Role, sha256Hex } from '#platform';
import { TEST_PASSWORD, TestContext, uniqueEmail } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';
import { auditEntries } from './support/audit-entries.js';
import { MailCatcher } from './support/mail-catcher.js';

const DAY = 24 * 3600 * 1000;
const INVITE = '/api/v1/team/invite';
const INVITES = '/api/v1/team/invites';
const validateUrl = (token: string) => `${INVITES}/validate/${token}`;
const acceptUrl = (token: string) => `${INVITES}/${token}/accept`;
const INVITE_KEYS = ['createdAt', 'email', 'expiresAt', 'id', 'invitedBy', 'role'];
const SUBJECT = /^You are invited to join /;

interface Invitation {
  id: string;
  email: string;
  role: Role;
  expiresAt: string;
  invitedBy: { id: string; email: string };
  createdAt: string;
}

describe('team invitations', () => {
  let ctx: TestContext;
  let mail: MailCatcher;

  beforeAll(async () => {
    mail = await MailCatcher.start();
    ctx = await TestContext.create({ config: { smtpUrl: mail.url } });
  });
  afterAll(async () => {
    await ctx?.close();
    await mail?.stop();
  });

  /** A fresh organization per test, registered at the clock's current time (tokens outlive clock moves). */
  const newOrg = (name = 'Inviting Org') => ctx.register({ organizationName: name });

  async function invite(
    owner: { token: string },
    body: { email: string; role?: Role },
  ): Promise<{ invitation: Invitation; token: string; raw: string }> {
    const before = mail.forRecipient(body.email).length;
    const res = await ctx.post(INVITE, { token: owner.token, body });
    expect(res.statusCode, res.body).toBe(201);
    const message = await nthMail(body.email, before + 1);
    const token = MailCatcher.tokenFrom(message, '/invite/');
    return { invitation: res.json().data as Invitation, token, raw: res.body };
  }

  /** The `n`th invitation e-mail to `to` (1-based), waiting for it to arrive. */
  async function nthMail(to: string, n: number) {
    const deadline = Date.now() + 5000;
    for (;;) {
      const sent = mail.forRecipient(to).filter((m) => SUBJECT.test(m.subject));
      if (sent.length >= n) return sent[n - 1]!;
      if (Date.now() > deadline) throw new Error(`Invitation e-mail ${n} to ${to} did not arrive`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  /** A registered account whose address counts as proven (as a magic link or a confirmed sign-up leaves it). */
  async function provenAccount(organizationName: string) {
    const account = await ctx.register({ organizationName });
    await ctx.db.db
      .update(users)
      .set({ emailVerifiedAt: ctx.clock.now(), emailVerifiedVia: 'magic_link' })
      .where(eq(users.id, account.user.id));
    return account;
  }

  async function memberEmails(token: string): Promise<string[]> {
    const res = await ctx.get('/api/v1/team/members', { token });
    expect(res.statusCode, res.body).toBe(200);
    return (res.json().data as { email: string }[]).map((m) => m.email);
  }

  describe('invite, mail, validate, accept', () => {
    it('creates a new account from the e-mailed token, with the invited role, and never returns the token', async () => {
      const owner = await newOrg('Analytical Engines');
      const email = uniqueEmail('invitee');
      const before = ctx.clock.nowMs();
      const { invitation, token, raw } = await invite(owner, { email, role: 'admin' });

      expect(Object.keys(invitation).sort()).toEqual(INVITE_KEYS);
      expect(invitation).toMatchObject({
        email,
        role: 'admin',
        invitedBy: { id: owner.user.id, email: owner.user.email },
      });
      expect(Date.parse(invitation.expiresAt)).toBe(before + 7 * DAY);
      expect(Date.parse(invitation.createdAt)).toBe(before);
      expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(raw).not.toContain(token);
      expect(raw).not.toMatch(/token/i);
      const message = await mail.waitFor(email, (m) => SUBJECT.test(m.subject));
      expect(message.subject).toBe('You are invited to join Analytical Engines');
      expect(message.decoded).toContain(`http://app.gov.test/invite/${token}`);
      // Stored as SHA-256 and sealed, never in clear.
      const [stored] = await ctx.db.db.select().from(invitations).where(eq(invitations.id, invitation.id));
      expect(stored!.tokenHash).toBe(sha256Hex(token));
      expect(stored!.tokenEncrypted).not.toContain(token);

      const listed = await ctx.get(INVITES, { token: owner.token });
      expect(listed.statusCode).toBe(200);
      expect(listed.json().data).toEqual([invitation]);
      expect(listed.body).not.toContain(token);

      const validation = await ctx.get(validateUrl(token));
      expect(validation.statusCode).toBe(200);
      expect(validation.json().data).toEqual({
        valid: true,
        organizationName: 'Analytical Engines',
        role: 'admin',
        inviterEmail: owner.user.email,
      });

      const accepted = await ctx.post(acceptUrl(token), {
        body: { name: 'Grace Hopper', password: TEST_PASSWORD },
      });
      expect(accepted.statusCode, accepted.body).toBe(200);
      const data = accepted.json().data;
      expect(data).toMatchObject({
        token: expect.any(String),
        user: { email, name: 'Grace Hopper', mfaEnabled: false },
        organization: { id: owner.organization.id, name: 'Analytical Engines' },
        role: 'admin',
      });
      expect(accepted.body).not.toMatch(/password|hash/i);
      const me = await ctx.get('/api/v1/auth/me', { token: data.token });
      expect(me.json().data).toMatchObject({ role: 'admin', organization: { id: owner.organization.id } });
      // The password chosen works for a normal login.
      expect(await ctx.login(email)).toEqual(expect.any(String));

      expect(await memberEmails(owner.token)).toContain(email);
      expect((await ctx.get(INVITES, { token: owner.token })).json().data).toEqual([]);
      expect((await ctx.get(validateUrl(token))).json().data).toEqual({ valid: false, reason: 'used' });
      expectErrorEnvelope(await ctx.post(acceptUrl(token), { body: {} }), 400, 'INVITE_ALREADY_USED');

      const [created] = await auditEntries(ctx, owner.token, 'team.invite.created');
      expect(created).toMatchObject({
        targetType: 'invitation',
        targetId: invitation.id,
        userId: owner.user.id,
        metadata: { email, role: 'admin', expiresAt: invitation.expiresAt },
      });
      const [acceptedEntry] = await auditEntries(ctx, owner.token, 'team.invite.accepted');
      expect(acceptedEntry).toMatchObject({
        targetType: 'invitation',
        targetId: invitation.id,
        userId: data.user.id,
        metadata: { email, role: 'admin', newUser: true },
      });
      const logins = await auditEntries(ctx, owner.token, 'auth.login');
      expect(logins.filter((e) => e.metadata.method === 'invite')).toEqual([
        expect.objectContaining({ userId: data.user.id }),
      ]);
      for (const entry of [created, acceptedEntry]) expect(JSON.stringify(entry)).not.toContain(token);
    });

    it('adds an existing, proven account signed in as itself, keeping its other organizations', async () => {
      const owner = await newOrg('Second Team');
      const existing = await provenAccount('Home');
      const { token } = await invite(owner, { email: existing.user.email.toUpperCase() });

      // The token proves only the mailbox: without the account's own session or password it is 401.
      expectErrorEnvelope(await ctx.post(acceptUrl(token)), 401, 'UNAUTHORIZED');
      const accepted = await ctx.post(acceptUrl(token), { token: existing.token });
      expect(accepted.statusCode, accepted.body).toBe(200);
      expect(accepted.json().data).toMatchObject({
        user: { id: existing.user.id },
        organization: { id: owner.organization.id },
        role: 'member',
      });
      const orgs = await ctx.get('/api/v1/auth/me/orgs', { token: accepted.json().data.token });
      expect(
        (orgs.json().data as { organizationId: string; role: string }[]).map((o) => o.organizationId).sort(),
      ).toEqual([existing.organization.id, owner.organization.id].sort());
      const [entry] = await auditEntries(ctx, owner.token, 'team.invite.accepted');
      expect(entry!.metadata).toMatchObject({ newUser: false, role: 'member' });
    });

    it('answers an existing account with MFA enabled with the MFA challenge for the inviting organization', async () => {
      const owner = await newOrg();
      const existing = await provenAccount('Secure Home');
      await ctx.db.db.update(users).set({ mfaEnabled: true }).where(eq(users.id, existing.user.id));
      const { token } = await invite(owner, { email: existing.user.email, role: 'viewer' });

      const accepted = await ctx.post(acceptUrl(token), { body: { password: existing.password } });
      expect(accepted.statusCode, accepted.body).toBe(200);
      expect(accepted.json().data).toEqual({ mfaRequired: true, tempToken: expect.any(String) });
      const [, payload] = (accepted.json().data.tempToken as string).split('.');
      expect(JSON.parse(Buffer.from(payload!, 'base64url').toString())).toMatchObject({
        purpose: 'mfa',
        sub: existing.user.id,
        organizationId: owner.organization.id,
      });
      expect(await memberEmails(owner.token)).toContain(existing.user.email);
      expect((await ctx.get(validateUrl(token))).json().data).toEqual({ valid: false, reason: 'used' });
    });

    it('requires name and a policy-conforming password for a new account (400), leaving the invite pending', async () => {
      const owner = await newOrg();
      const email = uniqueEmail('needs-body');
      const { token } = await invite(owner, { email });

      const missing = expectErrorEnvelope(await ctx.post(acceptUrl(token)), 400, 'VALIDATION_ERROR');
      expect((missing.details as { field: string }[]).map((d) => d.field).sort()).toEqual([
        'name',
        'password',
      ]);
      expectErrorEnvelope(
        await ctx.post(acceptUrl(token), { body: { name: 'Weak', password: 'short' } }),
        400,
        'VALIDATION_ERROR',
      );
      expectErrorEnvelope(
        await ctx.post(acceptUrl(token), { body: { name: 'No Digits', password: 'NoDigitsHere' } }),
        400,
        'VALIDATION_ERROR',
      );
      expect((await ctx.get(validateUrl(token))).json().data.valid).toBe(true);
      expect(await memberEmails(owner.token)).not.toContain(email);
      const [row] = await ctx.db.db.select().from(users).where(eq(users.email, email));
      expect(row).toBeUndefined();
    });

    it('accepts a token once when two accepts race: one membership, one 400 INVITE_ALREADY_USED', async () => {
      const owner = await newOrg();
      const email = uniqueEmail('racer');
      const { token } = await invite(owner, { email });
      const body = { name: 'Racer', password: TEST_PASSWORD };
      const [a, b] = await Promise.all([
        ctx.post(acceptUrl(token), { body }),
        ctx.post(acceptUrl(token), { body }),
      ]);
      expect([a.statusCode, b.statusCode].sort(), `${a.body} ${b.body}`).toEqual([200, 400]);
      expect((a.statusCode === 400 ? a : b).json().code).toBe('INVITE_ALREADY_USED');
      expect((await memberEmails(owner.token)).filter((e) => e === email)).toHaveLength(1);
      expect(await ctx.db.db.select().from(users).where(eq(users.email, email))).toHaveLength(1);
      expect(await auditEntries(ctx, owner.token, 'team.invite.accepted')).toHaveLength(1);
    });

    it('refuses the accept with 400 ALREADY_MEMBER when the e-mail became a member in the meantime', async () => {
      const owner = await newOrg();
      const existing = await provenAccount('Home');
      const { token } = await invite(owner, { email: existing.user.email });
      const now = ctx.clock.now();
      await ctx.db.db.insert(memberships).values({
        id: newId(),
        organizationId: owner.organization.id,
        userId: existing.user.id,
        role: 'viewer',
        isActive: true,
        createdAt: now,
        updatedAt: now,
      });
      const body = expectErrorEnvelope(
        await ctx.post(acceptUrl(token), { token: existing.token }),
        400,
        'VALIDATION_ERROR',
      );
      expect(body.reason).toBe('ALREADY_MEMBER');
      expect(await auditEntries(ctx, owner.token, 'team.invite.accepted')).toEqual([]);
    });
  });

  describe('refusals on create', () => {
    it('refuses to invite a member or an e-mail with a pending invite: 400 VALIDATION_ERROR reason ALREADY_MEMBER', async () => {
      const owner = await newOrg();
      const email = uniqueEmail('twice');
      await invite(owner, { email });
      for (const target of [email, email.toUpperCase(), owner.user.email]) {
        const res = await ctx.post(INVITE, { token: owner.token, body: { email: target } });
        const body = expectErrorEnvelope(res, 400, 'VALIDATION_ERROR');
        expect(body.reason).toBe('ALREADY_MEMBER');
      }
      expect((await ctx.get(INVITES, { token: owner.token })).json().data).toHaveLength(1);
    });

    it('lets only an owner invite an owner, defaults the role to member, and validates the body', async () => {
      const owner = await newOrg();
      const admin = await ctx.addMember(owner.organization.id, 'admin');
      const member = await ctx.addMember(owner.organization.id, 'member');

      expectErrorEnvelope(
        await ctx.post(INVITE, { token: admin.token, body: { email: uniqueEmail('o'), role: 'owner' } }),
        403,
        'FORBIDDEN',
      );
      expectErrorEnvelope(
        await ctx.post(INVITE, { token: member.token, body: { email: uniqueEmail('m') } }),
        403,
        'FORBIDDEN',
      );
      expectErrorEnvelope(await ctx.get(INVITES, { token: member.token }), 403, 'FORBIDDEN');
      const byAdmin = await invite(admin, { email: uniqueEmail('by-admin') });
      expect(byAdmin.invitation).toMatchObject({ role: 'member', invitedBy: { id: admin.userId } });
      const ownerInvite = await invite(owner, { email: uniqueEmail('new-owner'), role: 'owner' });
      expect(ownerInvite.invitation.role).toBe('owner');

      for (const body of [{}, { email: 'not-an-email' }, { email: uniqueEmail('r'), role: 'superuser' }]) {
        expectErrorEnvelope(await ctx.post(INVITE, { token: owner.token, body }), 400, 'VALIDATION_ERROR');
      }
    });
  });

  describe('resend, expiry and revocation', () => {
    it('resends the same token and resets the expiry to 7 days from the resend', async () => {
      const owner = await newOrg();
      const email = uniqueEmail('resend');
      const { invitation, token } = await invite(owner, { email });

      ctx.clock.advance(6 * DAY);
      const ownerToken = await ctx.login(owner.user.email);
      const resent = await ctx.post(`${INVITES}/${invitation.id}/resend`, { token: ownerToken });
      expect(resent.statusCode, resent.body).toBe(200);
      expect(resent.json().data).toEqual({
        ...invitation,
        expiresAt: new Date(ctx.clock.nowMs() + 7 * DAY).toISOString(),
      });
      expect(resent.body).not.toContain(token);
      expect(MailCatcher.tokenFrom(await nthMail(email, 2), '/invite/')).toBe(token);
      expect(mail.forRecipient(email)).toHaveLength(2);

      ctx.clock.advance(6 * DAY);
      expect((await ctx.get(validateUrl(token))).json().data.valid).toBe(true);
      const accepted = await ctx.post(acceptUrl(token), { body: { name: 'Late', password: TEST_PASSWORD } });
      expect(accepted.statusCode, accepted.body).toBe(200);

      const freshOwner = await ctx.login(owner.user.email);
      const [entry] = await auditEntries(ctx, freshOwner, 'team.invite.resent');
      expect(entry).toMatchObject({
        targetId: invitation.id,
        metadata: { email, expiresAt: resent.json().data.expiresAt },
      });
      expect(JSON.stringify(entry)).not.toContain(token);
      // An accepted invitation can no longer be resent or revoked.
      expectErrorEnvelope(
        await ctx.post(`${INVITES}/${invitation.id}/resend`, { token: freshOwner }),
        404,
        'NOT_FOUND',
      );
      expectErrorEnvelope(
        await ctx.request('DELETE', `${INVITES}/${invitation.id}`, { token: freshOwner }),
        404,
        'NOT_FOUND',
      );
    });

    it('expires after 7 days: validate says expired without the organization, accept is 400 INVITE_EXPIRED', async () => {
      const owner = await newOrg('Hidden Name');
      const email = uniqueEmail('late');
      const { invitation, token } = await invite(owner, { email });

      ctx.clock.advance(7 * DAY + 1000);
      const validation = await ctx.get(validateUrl(token));
      expect(validation.statusCode).toBe(200);
      expect(validation.json().data).toEqual({ valid: false, reason: 'expired' });
      expect(validation.body).not.toContain('Hidden Name');
      expectErrorEnvelope(
        await ctx.post(acceptUrl(token), { body: { name: 'Late', password: TEST_PASSWORD } }),
        400,
        'INVITE_EXPIRED',
      );
      const ownerToken = await ctx.login(owner.user.email);
      expect((await ctx.get(INVITES, { token: ownerToken })).json().data).toEqual([]);
      // The e-mail can be invited again once the earlier invitation expired.
      const again = await invite({ token: ownerToken }, { email });
      expect(again.invitation.id).not.toBe(invitation.id);
      expect(again.token).not.toBe(token);
      // Reviving the expired one now would make two live invitations for the same e-mail.
      const revived = await ctx.post(`${INVITES}/${invitation.id}/resend`, { token: ownerToken });
      expect(expectErrorEnvelope(revived, 400, 'VALIDATION_ERROR').reason).toBe('ALREADY_MEMBER');
    });

    it('revokes: validate says revoked, accept is 404, the list and a second revoke no longer see it', async () => {
      const owner = await newOrg('Revoking Org');
      const email = uniqueEmail('revoked');
      const { invitation, token } = await invite(owner, { email });

      const res = await ctx.request('DELETE', `${INVITES}/${invitation.id}`, { token: owner.token });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual({ success: true, data: { id: invitation.id, deleted: true } });

      const validation = await ctx.get(validateUrl(token));
      expect(validation.json().data).toEqual({ valid: false, reason: 'revoked' });
      expect(validation.body).not.toContain('Revoking Org');
      expectErrorEnvelope(
        await ctx.post(acceptUrl(token), { body: { name: 'X', password: TEST_PASSWORD } }),
        404,
        'NOT_FOUND',
      );
      expect((await ctx.get(INVITES, { token: owner.token })).json().data).toEqual([]);
      expectErrorEnvelope(
        await ctx.request('DELETE', `${INVITES}/${invitation.id}`, { token: owner.token }),
        404,
        'NOT_FOUND',
      );
      expectErrorEnvelope(
        await ctx.post(`${INVITES}/${invitation.id}/resend`, { token: owner.token }),
        404,
        'NOT_FOUND',
      );
      const [entry] = await auditEntries(ctx, owner.token, 'team.invite.revoked');
      expect(entry).toMatchObject({ targetType: 'invitation', targetId: invitation.id, metadata: { email } });
    });

    it('answers an unknown token with valid false not_found, and its accept with 404', async () => {
      for (const token of ['A'.repeat(43), 'x'.repeat(200)]) {
        expect((await ctx.get(validateUrl(token))).json().data).toEqual({
          valid: false,
          reason: 'not_found',
        });
        expectErrorEnvelope(await ctx.post(acceptUrl(token)), 404, 'NOT_FOUND');
      }
    });
  });

  describe('scoping', () => {
    it('answers 404 for another organization’s invitation id on revoke and resend, and leaves it intact', async () => {
      const owner = await newOrg();
      const other = await newOrg('Other');
      const { invitation, token } = await invite(other, { email: uniqueEmail('theirs') });
      for (const id of [invitation.id, 'f'.repeat(24), 'nope']) {
        expectErrorEnvelope(
          await ctx.request('DELETE', `${INVITES}/${id}`, { token: owner.token }),
          404,
          'NOT_FOUND',
        );
        expectErrorEnvelope(
          await ctx.post(`${INVITES}/${id}/resend`, { token: owner.token }),
          404,
          'NOT_FOUND',
        );
      }
      expect((await ctx.get(INVITES, { token: owner.token })).json().data).toEqual([]);
      expect((await ctx.get(validateUrl(token))).json().data.valid).toBe(true);
      expect(await auditEntries(ctx, other.token, 'team.invite.revoked')).toEqual([]);
    });
  });
});
