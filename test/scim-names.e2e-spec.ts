import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { hashPassword } from '../libs/identity/src/auth/password.js';
import { users } from '../libs/identity/src/users/user.schema.js';
import { expectErrorEnvelope } from './support/assertions.js';
import { expectScimError, patchOp, provisionUser, scimUser } from './support/scim.js';
import { CHOSEN_PASSWORD, INVITES, scimEmailSuite } from './support/scim-emails.js';

/*
 * Issue 29, item 7: the displayName and name an organization's IdP writes over SCIM are kept for that organization;
 * the account's own name and sign-in address follow the IdP only when the account is the organization's own and
 * unshared. A shared account keeps its name and address whatever one IdP writes; a userName change of an own account
 * leaves the new address unproven, and an invitation to it claims the account. Item 8 (emails) is in
 * scim-emails.e2e-spec.ts. See docs/identity-administrators.md, "SCIM provisioning".
 */

describe('SCIM e-mails and per-organization names', () => {
  const s = scimEmailSuite(['Contoso Names', 'Fabrikam']);
  const { address, provisionLikeEntra, scimGet, filterIds, updates, memberIn, login, invite, accept } = s;

  describe('displayName, name and userName per organization (item 7)', () => {
    it('an account shared with another organization keeps its name and address whatever one IdP writes', async () => {
      const { ctx } = s;
      const [contoso, fabrikam] = s.orgs;
      const email = address('shared');
      const { id } = await provisionLikeEntra(contoso, email, { givenName: 'Pat', familyName: 'Idp' });
      expect(await memberIn(contoso.owner.token, id)).toMatchObject({ name: 'Pat Idp', email });

      // Fabrikam invites the same address. The SCIM-made account is unproven: the mailbox claims it with its own
      // name and password; from then on it is nobody's own.
      const { token } = await invite(fabrikam.owner.token, email);
      expectErrorEnvelope(await accept(token), 400, 'VALIDATION_ERROR');
      expectErrorEnvelope(await accept(token, { password: CHOSEN_PASSWORD }), 400, 'VALIDATION_ERROR');
      const claimed = await accept(token, { name: 'Pat Person', password: CHOSEN_PASSWORD });
      expect(claimed.statusCode, claimed.body).toBe(200);
      expect(claimed.json().data).toMatchObject({
        user: { id, email, name: 'Pat Person' },
        organization: { id: fabrikam.owner.organization.id },
      });
      const person = claimed.json().data.token as string;

      // Contoso's IdP renames its view of the person.
      const patched = await contoso.client.patch(
        `/Users/${id}`,
        patchOp(
          { op: 'Replace', path: 'displayName', value: 'Pat (Contoso)' },
          { op: 'Replace', path: 'name.givenName', value: 'Patricia' },
        ),
      );
      expect(patched.statusCode, patched.body).toBe(200);
      expect(patched.json()).toMatchObject({
        displayName: 'Pat (Contoso)',
        name: { givenName: 'Patricia', familyName: 'Idp' },
      });
      expect(await scimGet(contoso, id)).toMatchObject({
        displayName: 'Pat (Contoso)',
        name: { givenName: 'Patricia', familyName: 'Idp' },
      });
      expect(await filterIds(contoso, 'displayName eq "Pat (Contoso)"')).toEqual([id]);
      const renames = await updates(contoso, id);
      expect(renames.at(-1)!.metadata).toMatchObject({ changed: ['displayName', 'name.givenName'] });

      // The account's own name is the one the person chose: for the person, and in Fabrikam.
      const me = await ctx.get('/api/v1/auth/me', { token: person });
      expect(me.statusCode, me.body).toBe(200);
      expect(me.json().data.user).toMatchObject({ id, email, name: 'Pat Person' });
      expect(await memberIn(fabrikam.owner.token, id)).toMatchObject({ name: 'Pat Person', email });
      expect(await memberIn(contoso.owner.token, id)).toMatchObject({ name: 'Pat Person', email });

      // Fabrikam's SCIM sees its own view: not Contoso's names, and its own writes stay in Fabrikam.
      const [inFabrikam] = await filterIds(fabrikam, `userName eq "${email}"`);
      expect(inFabrikam).toBe(id);
      expect(await scimGet(fabrikam, id)).toMatchObject({
        displayName: 'Pat Person',
        name: { formatted: 'Pat Person' },
        emails: [{ value: email, type: 'work', primary: true }],
      });
      expect((await scimGet(fabrikam, id)).name).not.toHaveProperty('givenName');
      const own = await fabrikam.client.patch(
        `/Users/${id}`,
        patchOp({ op: 'replace', value: { displayName: 'Pat (Fabrikam)' } }),
      );
      expect(own.json().displayName).toBe('Pat (Fabrikam)');
      expect((await scimGet(contoso, id)).displayName).toBe('Pat (Contoso)');
      expect((await ctx.get('/api/v1/auth/me', { token: person })).json().data.user.name).toBe('Pat Person');

      // Neither IdP may move the shared sign-in address.
      for (const org of [contoso, fabrikam]) {
        expectScimError(
          await org.client.patch(
            `/Users/${id}`,
            patchOp({ op: 'Replace', path: 'userName', value: address('hijack') }),
          ),
          400,
          'invalidValue',
        );
        expectScimError(
          await org.client.put(`/Users/${id}`, scimUser(address('hijack'))),
          400,
          'invalidValue',
        );
      }
      expect(await scimGet(contoso, id)).toMatchObject({ userName: email, displayName: 'Pat (Contoso)' });
      expect((await login(email, CHOSEN_PASSWORD)).statusCode).toBe(200);
    });

    it('the organization’s own unshared account follows its IdP’s displayName; one it did not create does not', async () => {
      const { ctx } = s;
      const [contoso] = s.orgs;
      const email = address('own');
      const id = await provisionUser(contoso.client, email, {
        name: { givenName: 'Owen', familyName: 'Own' },
      });
      expect(await memberIn(contoso.owner.token, id)).toMatchObject({ name: 'Owen Own' });
      const res = await contoso.client.patch(
        `/Users/${id}`,
        patchOp({ op: 'Replace', path: 'displayName', value: 'Owen Renamed' }),
      );
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().displayName).toBe('Owen Renamed');
      expect(await memberIn(contoso.owner.token, id)).toMatchObject({ name: 'Owen Renamed', email });

      // An account Contoso did not create (added, not provisioned), though only in Contoso: its holder's name.
      const member = await ctx.addMember(contoso.owner.organization.id, 'member');
      const patched = await contoso.client.patch(
        `/Users/${member.userId}`,
        patchOp({ op: 'replace', path: 'displayName', value: 'Renamed By Idp' }),
      );
      expect(patched.statusCode, patched.body).toBe(200);
      expect(patched.json().displayName).toBe('Renamed By Idp');
      expect(await memberIn(contoso.owner.token, member.userId)).toMatchObject({ name: 'member user' });
      expect((await ctx.get('/api/v1/auth/me', { token: member.token })).json().data.user.name).toBe(
        'member user',
      );
      // Nor its sign-in address.
      const moved = address('moved-member');
      expectScimError(
        await contoso.client.patch(
          `/Users/${member.userId}`,
          patchOp({ op: 'replace', path: 'userName', value: moved }),
        ),
        400,
        'invalidValue',
      );
      expectScimError(
        await contoso.client.patch(
          `/Users/${member.userId}`,
          patchOp({ op: 'replace', value: { userName: moved } }),
        ),
        400,
        'invalidValue',
      );
      expectScimError(
        await contoso.client.put(`/Users/${member.userId}`, scimUser(moved)),
        400,
        'invalidValue',
      );
      expect(await scimGet(contoso, member.userId)).toMatchObject({ userName: member.email });
      expect((await login(member.email)).statusCode).toBe(200);
      expectErrorEnvelope(await login(moved), 401, 'INVALID_CREDENTIALS');
    });

    it('a userName change of the own unshared account leaves the new address unproven: an invitation to it claims the account', async () => {
      const { ctx } = s;
      const [contoso, fabrikam] = s.orgs;
      const email = address('mover');
      const id = await provisionUser(contoso.client, email, { displayName: 'Mo Ver' });
      // A proven address on an account still Contoso's own (set in place: an HTTP proof of an unproven account, a
      // password reset for one, may also end the IdP's ownership), with a password its holder signs in with.
      await ctx.db.db
        .update(users)
        .set({
          passwordHash: await hashPassword(CHOSEN_PASSWORD),
          emailVerifiedAt: ctx.clock.now(),
          emailVerifiedVia: 'magic_link',
        })
        .where(eq(users.id, id));
      const proven = await invite(fabrikam.owner.token, email);
      expectErrorEnvelope(
        await accept(proven.token, { name: 'Anyone', password: 'Attacker-Pass-99' }),
        401,
        'INVALID_CREDENTIALS',
      );
      expectErrorEnvelope(await accept(proven.token), 401, 'UNAUTHORIZED');
      expect((await ctx.delete(`${INVITES}/${proven.id}`, { token: fabrikam.owner.token })).statusCode).toBe(
        200,
      );
      const holder = (await login(email, CHOSEN_PASSWORD)).json().data.token as string;

      const newAddress = address('Moved');
      const moved = await contoso.client.patch(
        `/Users/${id}`,
        patchOp({ op: 'Replace', path: 'userName', value: newAddress }),
      );
      expect(moved.statusCode, moved.body).toBe(200);
      expect(moved.json()).toMatchObject({
        userName: newAddress.toLowerCase(),
        emails: [{ value: newAddress.toLowerCase(), type: 'work', primary: true }],
      });
      expect(await memberIn(contoso.owner.token, id)).toMatchObject({ email: newAddress.toLowerCase() });
      expectErrorEnvelope(await login(email, CHOSEN_PASSWORD), 401, 'INVALID_CREDENTIALS');
      expect((await login(newAddress, CHOSEN_PASSWORD)).statusCode).toBe(200);

      // The new address was only the IdP's word: its password alone does not join, the mailbox claims the account.
      const claim = await invite(fabrikam.owner.token, newAddress.toLowerCase());
      expectErrorEnvelope(await accept(claim.token, { password: CHOSEN_PASSWORD }), 400, 'VALIDATION_ERROR');
      expectErrorEnvelope(await accept(claim.token), 400, 'VALIDATION_ERROR');
      const claimed = await accept(claim.token, { name: 'Mailbox Holder', password: 'Mailbox-Pass-777' });
      expect(claimed.statusCode, claimed.body).toBe(200);
      expect(claimed.json().data.user).toMatchObject({ id, name: 'Mailbox Holder' });
      expectErrorEnvelope(await ctx.get('/api/v1/auth/me', { token: holder }), 401, 'SESSION_REVOKED');
      expectErrorEnvelope(await login(newAddress, CHOSEN_PASSWORD), 401, 'INVALID_CREDENTIALS');
      expect((await login(newAddress, 'Mailbox-Pass-777')).statusCode).toBe(200);

      // Now shared (and no longer Contoso's own): the userName stays.
      expectScimError(
        await contoso.client.patch(
          `/Users/${id}`,
          patchOp({ op: 'Replace', path: 'userName', value: address('again') }),
        ),
        400,
        'invalidValue',
      );
      expect((await scimGet(contoso, id)).userName).toBe(newAddress.toLowerCase());
    });
  });
});
