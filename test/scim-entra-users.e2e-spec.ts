import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { organizations } from '../libs/identity/src/organizations/organization.schema.js';
import { expectScimError } from './support/scim.js';
import { ENTERPRISE, expectList, expectScim, q, SCIM_BASE, USER } from './support/scim-dialects.js';
import { scimDialectSuite } from './support/scim-suite.js';

/*
 * Microsoft Entra ID's requests to create, read and query users, as its tutorial shows them ([ENTRA-TUTORIAL],
 * [ENTRA-MAPPINGS]; the sources are listed in test/support/scim-dialects.ts): Test Connection, Create User with its
 * nulls and misspelt URN, a role from roles[].value, Get User, Get User by query on the userName or the work e-mail,
 * and the PATCH of a multi-valued or single-valued attribute.
 */

describe('SCIM dialects: Microsoft Entra ID and Okta', () => {
  const s = scimDialectSuite();
  const { memberOf, create } = s;

  describe('Microsoft Entra ID request bodies', () => {
    it('Test Connection / "Get User by query - Zero results": 200 with an empty ListResponse', async () => {
      const { client } = s.entra;
      // [ENTRA-TUTORIAL] GET /Users?filter=userName eq "non-existent user"; "Test Connection" expects 200 + empty list.
      const resources = expectList(await client.get(`/Users${q('userName eq "non-existent user"')}`), 0);
      expect(resources).toEqual([]);
      // Test Connection uses a random GUID as the matching value.
      expectList(await client.get(`/Users${q('userName eq "5b50642d-79fc-4410-9e90-4c077cdd1a59"')}`), 0);
    });

    it('"Create User": 201 with Location, the id, externalId, userName, name, active and the work e-mail', async () => {
      const { entra } = s;
      const { client } = entra;
      // [ENTRA-TUTORIAL] Create User, request body as sent (userName is the e-mail here).
      const body = {
        schemas: [
          'urn:ietf:params:scim:schemas:core:2.0:User',
          'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User',
        ],
        externalId: '0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef',
        userName: 'Test_User_00aa00aa-bb11-cc22-dd33-44ee44ee44ee@Entra.Example',
        active: true,
        emails: [
          {
            primary: true,
            type: 'work',
            value: 'Test_User_00aa00aa-bb11-cc22-dd33-44ee44ee44ee@Entra.Example',
          },
        ],
        meta: { resourceType: 'User' },
        name: { formatted: 'givenName familyName', familyName: 'familyName', givenName: 'givenName' },
        roles: [],
      };
      const user = await create(client, body);
      expect(user).toMatchObject({
        schemas: [USER],
        externalId: '0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef',
        userName: 'test_user_00aa00aa-bb11-cc22-dd33-44ee44ee44ee@entra.example',
        name: { formatted: 'givenName familyName', familyName: 'familyName', givenName: 'givenName' },
        displayName: 'givenName familyName',
        active: true,
        // The e-mails as Entra wrote them (no drift: docs/identity-administrators.md, "SCIM provisioning"), while the
        // userName is the lower-cased address.
        emails: [
          {
            value: 'Test_User_00aa00aa-bb11-cc22-dd33-44ee44ee44ee@Entra.Example',
            type: 'work',
            primary: true,
          },
        ],
        meta: { resourceType: 'User', location: `${SCIM_BASE}/Users/${user.id as string}` },
      });
      expect(user.id).toMatch(/^[0-9a-f]{24}$/);
      // `roles: []` maps to the default role.
      expect(await memberOf(entra, user.id as string)).toMatchObject({ role: 'member', isActive: true });

      // The same address again, in another case: 409 uniqueness, nothing created.
      expectScimError(
        await client.post('/Users', { ...body, userName: body.userName.toUpperCase(), externalId: 'other' }),
        409,
        'uniqueness',
      );
      expectList(await client.get(`/Users${q(`userName eq "${body.userName}"`)}`), 1);
    });

    it('"Example 2. Provision a user": null attributes and a misspelt extension URN are accepted', async () => {
      const { client } = s.entra;
      // [ENTRA-TUTORIAL] Build a SCIM endpoint, Example 2: POST with nulls for attributes Entra has no value for.
      const user = await create(client, {
        schemas: [
          'urn:ietf:params:scim:schemas:core:2.0:User',
          'urn:ietf:params:scim:schemas:extension:enterprise:2.0User',
        ],
        externalId: 'jyoung',
        userName: 'jyoung@entra.example',
        active: true,
        addresses: null,
        displayName: 'Joy Young',
        emails: [{ type: 'work', value: 'jyoung@Entra.example', primary: true }],
        meta: { resourceType: 'User' },
        name: { familyName: 'Young', givenName: 'Joy' },
        phoneNumbers: null,
        preferredLanguage: null,
        title: null,
        department: null,
        manager: null,
      });
      expect(user).toMatchObject({
        externalId: 'jyoung',
        userName: 'jyoung@entra.example',
        displayName: 'Joy Young',
        name: { familyName: 'Young', givenName: 'Joy' },
        active: true,
      });

      // Example 1 (with the value quoted, as RFC 7644 requires): the query by externalId finds it.
      const found = expectList(await client.get(`/Users${q('externalId eq "jyoung"')}`), 1);
      expect(found[0]).toMatchObject({ id: user.id, userName: 'jyoung@entra.example' });
      // Example 3: the current state by id.
      expect(expectScim(await client.get(`/Users/${user.id as string}`), 200)).toMatchObject({
        id: user.id,
        externalId: 'jyoung',
      });
    });

    it('"Provisioning a role to a SCIM app" (SingleAppRoleAssignment): roles[].value goes through the mapping rules', async () => {
      const { ctx, entra } = s;
      const { client } = entra;
      await ctx.db.db
        .update(organizations)
        .set({ roleMappingRules: [{ pattern: '^Admin$', role: 'admin' }] })
        .where(eq(organizations.id, entra.owner.organization.id));
      // [ENTRA-MAPPINGS] SingleAppRoleAssignment, example output (POST).
      const user = await create(client, {
        schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
        externalId: 'alias',
        userName: 'alias@contoso.example',
        active: true,
        displayName: 'First Name Last Name',
        meta: { resourceType: 'User' },
        roles: [{ primary: true, type: 'WindowsAzureActiveDirectoryRole', value: 'Admin' }],
      });
      expect(user).toMatchObject({ userName: 'alias@contoso.example', displayName: 'First Name Last Name' });
      expect(user.groups).toEqual([{ value: 'admin', display: 'admin', $ref: `${SCIM_BASE}/Groups/admin` }]);
      expect(await memberOf(entra, user.id as string)).toMatchObject({ role: 'admin' });
    });

    it('"Get User" and "Get User by query": 200; an unknown id is 404 without scimType', async () => {
      const { client } = s.entra;
      const user = await create(client, {
        schemas: [USER, ENTERPRISE],
        externalId: '58342554-38d6-4ec8-948c-50044d0a33fd',
        userName: 'get.user@entra.example',
        active: true,
        name: { familyName: 'familyName', givenName: 'givenName' },
      });
      // [ENTRA-TUTORIAL] Get User: GET /Users/<id>.
      expect(expectScim(await client.get(`/Users/${user.id as string}`), 200)).toMatchObject({
        schemas: [USER],
        id: user.id,
        externalId: '58342554-38d6-4ec8-948c-50044d0a33fd',
        userName: 'get.user@entra.example',
        name: { familyName: 'familyName', givenName: 'givenName' },
        active: true,
        emails: [{ value: 'get.user@entra.example', type: 'work', primary: true }],
        meta: { resourceType: 'User' },
      });
      // [ENTRA-TUTORIAL] Get User, "User not found": GET /Users/5171a35d82074e068ce2 → 404.
      expectScimError(await client.get('/Users/5171a35d82074e068ce2'), 404);
      expectScimError(await client.get('/Users/0123456789abcdef01234567'), 404);
      // [ENTRA-TUTORIAL] Get User by query: userName eq "…" (matched without regard to case).
      const found = expectList(await client.get(`/Users${q('userName eq "Get.User@Entra.Example"')}`), 1);
      expect(found[0]).toMatchObject({ id: user.id, userName: 'get.user@entra.example' });
      // The address as emails.value, and in a value filter on the value alone.
      for (const filter of [
        'emails.value eq "get.user@entra.example"',
        'emails[value eq "Get.User@entra.example"]',
      ]) {
        expect(expectList(await client.get(`/Users${q(filter)}`), 1)[0]).toMatchObject({ id: user.id });
      }
    });

    it('"Get User by query" on the work e-mail, the other matching attribute the tutorial names', async () => {
      const { client } = s.entra;
      const user = await create(client, { schemas: [USER], userName: 'by.mail@entra.example' });
      // [ENTRA-TUTORIAL] "Use userName or emails[type eq "work"] attributes to query users" and "/Users: … a GET to
      // /Users with a filter must allow for both userName eq "user@contoso.com" and emails[type eq "work"].value eq
      // "user@contoso.com" queries". Every address the service returns is of type work.
      const rfcForm = await client.get(
        `/Users${q('emails[type eq "work" and value eq "by.mail@entra.example"]')}`,
      );
      const entraForm = await client.get(
        `/Users${q('emails[type eq "work"].value eq "by.mail@entra.example"')}`,
      );
      expect(expectList(rfcForm, 1)[0]).toMatchObject({ id: user.id });
      expect(expectList(entraForm, 1)[0]).toMatchObject({ id: user.id });
    });

    it('"Update User [Multi-valued properties]": 200, the family name replaced', async () => {
      const { client } = s.entra;
      const user = await create(client, {
        schemas: [USER],
        userName: 'multi@entra.example',
        externalId: '6c75de36-30fa-4d2d-a196-6bdcdb6b6539',
        name: { givenName: 'givenName', familyName: 'familyName' },
      });
      // [ENTRA-TUTORIAL] Update User [Multi-valued properties].
      const res = await client.patch(`/Users/${user.id as string}`, {
        schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
        Operations: [
          { op: 'Replace', path: 'emails[type eq "work"].value', value: 'updatedEmail@entra.example' },
          { op: 'Replace', path: 'name.familyName', value: 'updatedFamilyName' },
        ],
      });
      expect(expectScim(res, 200)).toMatchObject({
        schemas: [USER],
        id: user.id,
        externalId: '6c75de36-30fa-4d2d-a196-6bdcdb6b6539',
        name: {
          formatted: 'givenName updatedFamilyName',
          familyName: 'updatedFamilyName',
          givenName: 'givenName',
        },
        active: true,
        // The work address is stored as written (docs/identity-administrators.md, "SCIM provisioning"), and the
        // userName stays the sign-in address.
        userName: 'multi@entra.example',
        emails: [{ value: 'updatedEmail@entra.example', type: 'work', primary: true }],
      });
    });

    it('"Update User [Single-valued properties]": 200, the userName replaced (and lower-cased)', async () => {
      const { client } = s.entra;
      const user = await create(client, {
        schemas: [USER],
        userName: 'single@entra.example',
        externalId: 'aa1eca08-7179-4eeb-a0be-a519f7e5cd1a',
        name: { givenName: 'givenName', familyName: 'familyName' },
      });
      // [ENTRA-TUTORIAL] Update User [Single-valued properties].
      const res = await client.patch(`/Users/${user.id as string}`, {
        schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
        Operations: [
          { op: 'Replace', path: 'userName', value: '5B50642D-79fc-4410-9e90-4c077cdd1a59@entra.example' },
        ],
      });
      expect(expectScim(res, 200)).toMatchObject({
        id: user.id,
        externalId: 'aa1eca08-7179-4eeb-a0be-a519f7e5cd1a',
        userName: '5b50642d-79fc-4410-9e90-4c077cdd1a59@entra.example',
        name: { familyName: 'familyName', givenName: 'givenName' },
        active: true,
        emails: [
          { value: '5b50642d-79fc-4410-9e90-4c077cdd1a59@entra.example', type: 'work', primary: true },
        ],
      });
      expectList(await client.get(`/Users${q('userName eq "single@entra.example"')}`), 0);
      expectList(
        await client.get(`/Users${q('userName eq "5b50642d-79fc-4410-9e90-4c077cdd1a59@entra.example"')}`),
        1,
      );
    });
  });
});
