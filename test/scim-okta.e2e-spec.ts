import { describe, expect, it } from 'vitest';
import { expectErrorEnvelope } from './support/assertions.js';
import { expectScimError } from './support/scim.js';
import { expectList, expectScim, GROUP, LIST, PATCH_OP, USER } from './support/scim-dialects.js';
import { scimDialectSuite } from './support/scim-suite.js';

/*
 * Okta's requests from its SCIM 2.0 reference ([OKTA-SCIM20]; the sources are listed in
 * test/support/scim-dialects.ts): the existence check and Create User (an IdP password is not a sign-in password, a
 * taken address is 409), Retrieve Users with integer paging, PUT and PATCH of a user, the Group requests against the
 * role buckets, and membership pushes by filtered path, add and replace.
 */

describe('SCIM dialects: Microsoft Entra ID and Okta', () => {
  // Entra's organization holds an address that Okta's cannot take ("Create the User").
  const s = scimDialectSuite({ okta: true });
  const { login, memberOf, create } = s;

  describe('Okta request bodies', () => {
    const createBody = (userName: string, externalId: string) => ({
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
      userName,
      name: { givenName: 'Test', familyName: 'User' },
      emails: [{ primary: true, value: userName, type: 'work' }],
      displayName: 'Test User',
      locale: 'en-US',
      externalId,
      groups: [],
      password: '1mz050nq',
      active: true,
    });

    it('"Determine if the User already exists": the encoded userName eq filter with startIndex and count', async () => {
      const { client } = s.okta;
      // [OKTA-SCIM20] Create Users, "Determine if the User already exists".
      const res = await client.get(
        '/Users?filter=userName%20eq%20%22test.user%40okta.example%22&startIndex=1&count=100',
      );
      const body = expectScim(res, 200);
      expect(body).toEqual({
        schemas: [LIST],
        totalResults: 0,
        startIndex: 1,
        itemsPerPage: 0,
        Resources: [],
      });
    });

    it('"Create the User": 201 with the user; the IdP password is not a sign-in password; again: 409 uniqueness', async () => {
      const { entra, okta } = s;
      const { client } = okta;
      // [OKTA-SCIM20] Create Users, "Create the User".
      const user = await create(client, createBody('test.user@okta.example', '00ujl29u0le5T6Aj10h7'));
      expect(user).toMatchObject({
        schemas: [USER],
        userName: 'test.user@okta.example',
        name: { givenName: 'Test', familyName: 'User' },
        emails: [{ primary: true, value: 'test.user@okta.example', type: 'work' }],
        displayName: 'Test User',
        externalId: '00ujl29u0le5T6Aj10h7',
        active: true,
        meta: { resourceType: 'User' },
      });
      expect(user).not.toHaveProperty('password');
      expect(await memberOf(okta, user.id as string)).toMatchObject({ role: 'member', isActive: true });
      expectErrorEnvelope(await login('test.user@okta.example', '1mz050nq'), 401, 'INVALID_CREDENTIALS');

      // [OKTA-SCIM20] "If the User object that Okta tries to create already exists … 409 Conflict".
      expectScimError(
        await client.post('/Users', createBody('test.user@okta.example', '00ujl29u0le5T6Aj10h7')),
        409,
        'uniqueness',
      );
      // An address with an account in another organization is taken too.
      expectScimError(
        await client.post('/Users', createBody(entra.owner.user.email, 'x')),
        409,
        'uniqueness',
      );

      const again = expectList(
        await client.get(
          '/Users?filter=userName%20eq%20%22test.user%40okta.example%22&startIndex=1&count=100',
        ),
        1,
      );
      expect(again[0]).toMatchObject({ id: user.id, userName: 'test.user@okta.example' });
    });

    it('"Retrieve Users": ?startIndex=1&count=100, and pages of count with integer fields', async () => {
      const { client } = s.okta;
      for (const n of [1, 2, 3]) await create(client, createBody(`page${n}@okta.example`, `page-${n}`));
      // [OKTA-SCIM20] Retrieve Users.
      const all = await client.get('/Users?startIndex=1&count=100');
      const body = expectScim(all, 200);
      const total = body.totalResults as number;
      expect(total).toBeGreaterThanOrEqual(4);
      expect(body).toMatchObject({ startIndex: 1, itemsPerPage: total });
      const ids = (body.Resources as { id: string }[]).map((u) => u.id);
      const second = expectScim(await client.get('/Users?startIndex=2&count=2'), 200);
      expect(second).toMatchObject({ totalResults: total, startIndex: 2, itemsPerPage: 2 });
      expect((second.Resources as { id: string }[]).map((u) => u.id)).toEqual(ids.slice(1, 3));
    });

    it('"Retrieve a specific User", "Update a specific User (PUT)": 200 with the updated user', async () => {
      const { client } = s.okta;
      const user = await create(client, createBody('put.user@okta.example', '00uput'));
      const id = user.id as string;
      // [OKTA-SCIM20] Retrieve a specific User.
      expect(expectScim(await client.get(`/Users/${id}`), 200)).toMatchObject({
        schemas: [USER],
        id,
        userName: 'put.user@okta.example',
        name: { givenName: 'Test', familyName: 'User' },
        active: true,
        emails: [{ primary: true, value: 'put.user@okta.example', type: 'work' }],
        meta: { resourceType: 'User' },
      });
      // [OKTA-SCIM20] Update a specific User (PUT).
      const res = await client.put(`/Users/${id}`, {
        schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
        id,
        userName: 'put.user@okta.example',
        name: { givenName: 'Another', middleName: 'Excited', familyName: 'User' },
        emails: [
          { primary: true, value: 'put.user@okta.example', type: 'work', display: 'put.user@okta.example' },
        ],
        active: true,
        groups: [],
        meta: { resourceType: 'User' },
      });
      const put = expectScim(res, 200);
      expect(put).toMatchObject({
        schemas: [USER],
        id,
        userName: 'put.user@okta.example',
        name: { givenName: 'Another', familyName: 'User' },
        active: true,
      });
      // PUT replaces: what the body left out is cleared (externalId, displayName falls back to the names).
      expect(put).not.toHaveProperty('externalId');
      expect(put.displayName).toBe('Another User');
      expectScimError(
        await client.put('/Users/23a35c27-23d3-4c03-b4c5-6443c09e7173', {
          schemas: [USER],
          userName: 'x@okta.example',
        }),
        404,
      );
    });

    it('"Update a specific User (PATCH)": replace {active: false}, then {active: true}: 200 with the user', async () => {
      const { okta } = s;
      const { client } = okta;
      const user = await create(client, createBody('patch.user@okta.example', '00upatch'));
      const id = user.id as string;
      // [OKTA-SCIM20] Update a specific User (PATCH): deactivation.
      const res = await client.patch(`/Users/${id}`, {
        schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
        Operations: [{ op: 'replace', value: { active: false } }],
      });
      expect(expectScim(res, 200)).toMatchObject({
        schemas: [USER],
        id,
        userName: 'patch.user@okta.example',
        name: { givenName: 'Test', familyName: 'User' },
        active: false,
      });
      expect(await memberOf(okta, id)).toMatchObject({ isActive: false });
      const back = await client.patch(`/Users/${id}`, {
        schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
        Operations: [{ op: 'replace', value: { active: true } }],
      });
      expect(expectScim(back, 200)).toMatchObject({ id, active: true });
      expect(await memberOf(okta, id)).toMatchObject({ isActive: true });
    });

    it('"Create Groups" and "Delete a specific Group": 405; "Retrieve Groups" and "Retrieve specific Groups": 200', async () => {
      const { okta } = s;
      const { client } = okta;
      // [OKTA-SCIM20] Create Groups.
      expectScimError(
        await client.post('/Groups', {
          schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'],
          displayName: 'Test SCIMv2',
          members: [],
        }),
        405,
      );
      // [OKTA-SCIM20] Delete a specific Group.
      expectScimError(await client.delete('/Groups/reviewer'), 405);
      // A PUT of a group (custom AIW integrations) is refused the same way.
      expectScimError(
        await client.put('/Groups/reviewer', { schemas: [GROUP], displayName: 'reviewer', members: [] }),
        405,
      );
      // [OKTA-SCIM20] Retrieve Groups.
      const groups = expectList(await client.get('/Groups?startIndex=1&count=100'), 4);
      expect(groups.map((g) => g.id)).toEqual(['owner', 'admin', 'member', 'reviewer']);
      // [OKTA-SCIM20] Retrieve specific Groups.
      const owner = expectScim(await client.get('/Groups/owner'), 200);
      expect(owner).toMatchObject({
        schemas: [GROUP],
        id: 'owner',
        displayName: 'owner',
        members: [{ value: okta.owner.user.id, display: okta.owner.user.email }],
        meta: { resourceType: 'Group' },
      });
    });

    it('"Update a specific Group name": another name is 400 mutability', async () => {
      const { client } = s.okta;
      // [OKTA-SCIM20] Update a specific Group name (PATCH, a no-path replace with id and displayName).
      expectScimError(
        await client.patch('/Groups/admin', {
          schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
          Operations: [{ op: 'replace', value: { id: 'admin', displayName: 'Test SCIMv2' } }],
        }),
        400,
        'mutability',
      );
    });

    it('"Update a specific Group name" with the bucket’s own name (sent with every membership push): accepted', async () => {
      const { client } = s.okta;
      // [OKTA-SCIM20] "The group name update operation is triggered each time there is a group membership update
      // operation." A group linked to the `admin` bucket carries its name unchanged.
      const res = await client.patch('/Groups/admin', {
        schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
        Operations: [{ op: 'replace', value: { id: 'admin', displayName: 'admin' } }],
      });
      expect(res.statusCode, res.body).toBe(204);
    });

    it('"Update specific Group membership": remove by filtered path + add, then replace members: 204', async () => {
      const { okta } = s;
      const { client } = okta;
      const a = await create(client, createBody('member.a@okta.example', '00ua'));
      const b = await create(client, createBody('member.b@okta.example', '00ub'));
      const aId = a.id as string;
      const bId = b.id as string;
      const cId = (await create(client, createBody('member.c@okta.example', '00uc'))).id as string;
      let res = await client.patch('/Groups/admin', {
        schemas: [PATCH_OP],
        Operations: [
          { op: 'add', path: 'members', value: [{ value: bId, display: 'member.b@okta.example' }] },
        ],
      });
      expect(res.statusCode, res.body).toBe(204);
      expect(await memberOf(okta, bId)).toMatchObject({ role: 'admin' });

      // [OKTA-SCIM20] Update specific Group membership (remove by a filtered path, add with value and display).
      res = await client.patch('/Groups/admin', {
        schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
        Operations: [
          { op: 'remove', path: `members[value eq "${bId}"]` },
          { op: 'add', path: 'members', value: [{ value: aId, display: 'member.a@okta.example' }] },
        ],
      });
      expect(res.statusCode, res.body).toBe(204);
      expect(res.body).toBe('');
      expect(await memberOf(okta, aId)).toMatchObject({ role: 'admin' });
      expect(await memberOf(okta, bId)).toMatchObject({ role: 'member' });

      // [OKTA-SCIM20] Update specific Group membership, "a full push … using the replace operation".
      res = await client.patch('/Groups/admin', {
        schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
        Operations: [
          {
            op: 'replace',
            path: 'members',
            value: [
              { value: bId, display: 'member.b@okta.example' },
              { value: cId, display: 'member.c@okta.example' },
            ],
          },
        ],
      });
      expect(res.statusCode, res.body).toBe(204);
      expect(await memberOf(okta, aId)).toMatchObject({ role: 'member' });
      expect(await memberOf(okta, bId)).toMatchObject({ role: 'admin' });
      const admins = (expectScim(await client.get('/Groups/admin'), 200).members as { value: string }[]).map(
        (m) => m.value,
      );
      expect(admins).toContain(bId);
      expect(admins).not.toContain(aId);
      expect(admins.sort()).toEqual([bId, cId].sort());
      expect(await memberOf(okta, cId)).toMatchObject({ role: 'admin' });
    });
  });
});
