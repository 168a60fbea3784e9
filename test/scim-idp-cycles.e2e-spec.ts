import { describe, expect, it } from 'vitest';
import { expectErrorEnvelope } from './support/assertions.js';
import { ENTERPRISE, expectList, expectScim, PATCH_OP, q, USER } from './support/scim-dialects.js';
import { scimDialectSuite } from './support/scim-suite.js';

/*
 * Each identity provider's provisioning cycle end to end, as Microsoft Entra ID and Okta run it (the sources are
 * listed in test/support/scim-dialects.ts): match, create, update (Entra's PATCH, Okta's GET then PUT), disable and
 * re-enable with sign-in following (open sessions last), group assignment moving the role, and deprovisioning.
 */

describe('SCIM dialects: Microsoft Entra ID and Okta', () => {
  const s = scimDialectSuite({ okta: true });
  const { givePassword, login, me, memberOf, create } = s;

  describe('Microsoft Entra ID provisioning cycle', () => {
    it('query → create → query by externalId → update → disable ("False") → re-enable ("True") → group add/remove', async () => {
      const { ctx, entra } = s;
      const { client } = entra;
      const email = 'cycle.entra@contoso.example';
      // Matching: no such user yet.
      expectList(await client.get(`/Users${q(`userName eq "${email}"`)}`), 0);
      const user = await create(client, {
        schemas: [USER, ENTERPRISE],
        externalId: 'cycle-entra',
        userName: email,
        active: true,
        emails: [{ primary: true, type: 'work', value: email }],
        meta: { resourceType: 'User' },
        name: { formatted: 'Casey Cycle', familyName: 'Cycle', givenName: 'Casey' },
        roles: [],
      });
      const id = user.id as string;
      const found = expectList(await client.get(`/Users${q('externalId eq "cycle-entra"')}`), 1);
      expect(found[0]).toMatchObject({ id, userName: email });

      const updated = await client.patch(`/Users/${id}`, {
        schemas: [PATCH_OP],
        Operations: [
          { op: 'Replace', path: 'displayName', value: 'Casey C.' },
          { op: 'Replace', path: 'name.givenName', value: 'Kasey' },
        ],
      });
      expect(expectScim(updated, 200)).toMatchObject({
        id,
        displayName: 'Casey C.',
        name: { givenName: 'Kasey' },
      });

      await givePassword(id);
      const session = await ctx.login(email);
      const before = await me(session);
      expect(before.statusCode, before.body).toBe(200);
      expect(before.json().data).toMatchObject({
        user: { id, email, name: 'Casey C.' },
        organization: { id: entra.owner.organization.id },
        role: 'member',
      });

      // Disable, as Entra sends it without the compliance flag.
      const disabled = await client.patch(`/Users/${id}`, {
        schemas: [PATCH_OP],
        Operations: [{ op: 'Replace', path: 'active', value: 'False' }],
      });
      expect(expectScim(disabled, 200)).toMatchObject({ id, active: false });
      // A SCIM-deactivated user keeps an open session until it expires or is revoked
      // (docs/identity-administrators.md, "SCIM provisioning").
      expect((await me(session)).statusCode).toBe(200);
      expectErrorEnvelope(await login(email), 401, 'ACCOUNT_DEACTIVATED');
      expect(expectScim(await client.get(`/Users/${id}`), 200)).toMatchObject({ active: false });

      const enabled = await client.patch(`/Users/${id}`, {
        schemas: [PATCH_OP],
        Operations: [{ op: 'Replace', path: 'active', value: 'True' }],
      });
      expect(expectScim(enabled, 200)).toMatchObject({ id, active: true });
      const fresh = await ctx.login(email);
      expect((await me(fresh)).json().data).toMatchObject({ user: { id }, role: 'member' });

      // Group assignment: add to the admin bucket, then remove by the filtered path.
      let res = await client.patch('/Groups/admin', {
        schemas: [PATCH_OP],
        Operations: [{ op: 'Add', path: 'members', value: [{ $ref: null, value: id }] }],
      });
      expect(res.statusCode, res.body).toBe(204);
      expect((await me(fresh)).json().data).toMatchObject({ role: 'admin' });
      expect(await memberOf(entra, id)).toMatchObject({ role: 'admin', isActive: true });
      res = await client.patch('/Groups/admin', {
        schemas: [PATCH_OP],
        Operations: [{ op: 'remove', path: `members[value eq "${id}"]` }],
      });
      expect(res.statusCode, res.body).toBe(204);
      expect((await me(fresh)).json().data).toMatchObject({ role: 'member' });

      // Unassignment: DELETE; sign-in is refused again (the open session lasts).
      expect((await client.delete(`/Users/${id}`)).statusCode).toBe(204);
      // A SCIM-deactivated user keeps an open session until it expires or is revoked
      // (docs/identity-administrators.md, "SCIM provisioning").
      expect((await me(fresh)).statusCode).toBe(200);
      expectErrorEnvelope(await login(email), 401, 'ACCOUNT_DEACTIVATED');
    });
  });

  describe('Okta provisioning cycle', () => {
    it('query → create → get → PUT → PATCH {active: false} → PATCH {active: true} → replace group members', async () => {
      const { ctx, okta } = s;
      const { client } = okta;
      const email = 'cycle.okta@okta.example';
      // Import/match: the userName eq query finds nothing.
      expectList(
        await client.get(
          `/Users?filter=${encodeURIComponent(`userName eq "${email}"`)}&startIndex=1&count=100`,
        ),
        0,
      );
      const user = await create(client, {
        schemas: [USER],
        userName: email,
        name: { givenName: 'Olive', familyName: 'Okta' },
        emails: [{ primary: true, value: email, type: 'work' }],
        displayName: 'Olive Okta',
        locale: 'en-US',
        externalId: '00ucycle',
        groups: [],
        password: 'irrelevant-1',
        active: true,
      });
      const id = user.id as string;
      const got = expectScim(await client.get(`/Users/${id}`), 200);
      expect(got).toMatchObject({ id, userName: email, displayName: 'Olive Okta', active: true });

      // Okta GETs, changes the profile and PUTs the whole user back.
      const put = await client.put(`/Users/${id}`, {
        ...got,
        name: { givenName: 'Olivia', middleName: '', familyName: 'Okta' },
        displayName: 'Olivia Okta',
      });
      expect(expectScim(put, 200)).toMatchObject({
        id,
        userName: email,
        externalId: '00ucycle',
        displayName: 'Olivia Okta',
        name: { givenName: 'Olivia', familyName: 'Okta' },
        active: true,
      });

      await givePassword(id);
      const session = await ctx.login(email);
      expect((await me(session)).json().data).toMatchObject({
        user: { id, email, name: 'Olivia Okta' },
        role: 'member',
      });

      const off = await client.patch(`/Users/${id}`, {
        schemas: [PATCH_OP],
        Operations: [{ op: 'replace', value: { active: false } }],
      });
      expect(expectScim(off, 200)).toMatchObject({ id, active: false });
      // A SCIM-deactivated user keeps an open session until it expires or is revoked
      // (docs/identity-administrators.md, "SCIM provisioning").
      expect((await me(session)).statusCode).toBe(200);
      expectErrorEnvelope(await login(email), 401, 'ACCOUNT_DEACTIVATED');

      const on = await client.patch(`/Users/${id}`, {
        schemas: [PATCH_OP],
        Operations: [{ op: 'replace', value: { active: true } }],
      });
      expect(expectScim(on, 200)).toMatchObject({ id, active: true });
      const fresh = await ctx.login(email);
      expect((await me(fresh)).json().data).toMatchObject({ user: { id }, role: 'member' });

      // Group push: a full replace of the reviewer bucket's members, then an empty push.
      let res = await client.patch('/Groups/reviewer', {
        schemas: [PATCH_OP],
        Operations: [{ op: 'replace', path: 'members', value: [{ value: id, display: email }] }],
      });
      expect(res.statusCode, res.body).toBe(204);
      expect((await me(fresh)).json().data).toMatchObject({ role: 'viewer' });
      expect(await memberOf(okta, id)).toMatchObject({ role: 'viewer', isActive: true });
      res = await client.patch('/Groups/reviewer', {
        schemas: [PATCH_OP],
        Operations: [{ op: 'replace', path: 'members', value: [] }],
      });
      expect(res.statusCode, res.body).toBe(204);
      expect((await me(fresh)).json().data).toMatchObject({ role: 'member' });

      // Deprovisioning in Okta is PATCH active false (Okta sends no DELETE for users).
      const gone = await client.patch(`/Users/${id}`, {
        schemas: [PATCH_OP],
        Operations: [{ op: 'replace', value: { active: false } }],
      });
      expect(expectScim(gone, 200)).toMatchObject({ active: false });
      // A SCIM-deactivated user keeps an open session until it expires or is revoked
      // (docs/identity-administrators.md, "SCIM provisioning").
      expect((await me(fresh)).statusCode).toBe(200);
    });
  });
});
