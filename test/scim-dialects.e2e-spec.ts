import { eq } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../libs/identity/src/auth/password.js';
import { organizations } from '../libs/identity/src/organizations/organization.schema.js';
import { users } from '../libs/identity/src/users/user.schema.js';
import { TEST_PASSWORD, TestContext } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';
import { expectScimError, scimOrganization } from './support/scim.js';
import { MEMBERS, type TeamMember } from './support/team-suite.js';

/*
 * The requests Microsoft Entra ID and Okta send to a SCIM 2.0 service provider, as their public documentation shows
 * them: same shapes, casing ("Replace", "Add"), string booleans, extension attributes. Only ids and addresses are
 * ours (the service's userName is an e-mail address, its ids 24 hex digits, its groups the four role buckets).
 *
 * Sources:
 *  [ENTRA-TUTORIAL] Microsoft Learn, "Tutorial: Develop and plan provisioning for a SCIM endpoint in Microsoft Entra
 *    ID", https://learn.microsoft.com/en-us/entra/identity/app-provisioning/use-scim-to-provision-users-and-groups
 *    (sections "SCIM protocol requests and responses" and "Build a SCIM endpoint", examples 1-6).
 *  [ENTRA-COMPAT] Microsoft Learn, "Known issues and resolutions with SCIM 2.0 protocol compliance of the Microsoft
 *    Entra user provisioning service", https://learn.microsoft.com/en-us/entra/identity/app-provisioning/
 *    application-provisioning-config-problem-scim-compatibility (section "Flags to alter the SCIM behavior").
 *  [ENTRA-MAPPINGS] Microsoft Learn, "Tutorial - Customize user provisioning attribute-mappings for SaaS
 *    applications in Microsoft Entra ID", https://learn.microsoft.com/en-us/entra/identity/app-provisioning/
 *    customize-application-attributes (section "Provisioning a role to a SCIM app", SingleAppRoleAssignment).
 *  [OKTA-SCIM20] Okta Developer, "SCIM 2.0 Protocol Reference" (Okta and SCIM Version 2.0),
 *    https://developer.okta.com/docs/api/openapi/okta-scim/guides/scim-20
 *    (formerly https://developer.okta.com/docs/reference/scim/scim-20/).
 */

const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const LIST = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
const SCIM_BASE = 'http://gov.test/scim/v2';

type Client = Awaited<ReturnType<typeof scimOrganization>>['client'];
type Org = Awaited<ReturnType<typeof scimOrganization>>;

const q = (filter: string) => `?filter=${encodeURIComponent(filter)}`;

/** A SCIM success: the status and the SCIM media type. */
function expectScim(res: LightMyRequestResponse, status: number): Record<string, unknown> {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/scim\+json/);
  return res.json();
}

/** An RFC 7644 ListResponse with integers (Okta requires them) and these resources. */
function expectList(res: LightMyRequestResponse, total: number): Record<string, unknown>[] {
  const body = expectScim(res, 200);
  expect(body.schemas).toEqual([LIST]);
  expect(body.totalResults).toBe(total);
  expect(Number.isInteger(body.itemsPerPage)).toBe(true);
  expect(Number.isInteger(body.startIndex)).toBe(true);
  const resources = body.Resources as Record<string, unknown>[];
  expect(Array.isArray(resources)).toBe(true);
  expect(body.itemsPerPage).toBe(resources.length);
  return resources;
}

describe('SCIM dialects: Microsoft Entra ID and Okta', () => {
  let ctx: TestContext;
  let entra: Org;
  let okta: Org;

  /** Gives a provisioned account (no password) the test password, so its user can sign in. */
  async function givePassword(userId: string): Promise<void> {
    await ctx.db.db
      .update(users)
      .set({ passwordHash: await hashPassword(TEST_PASSWORD) })
      .where(eq(users.id, userId));
  }
  const loginRes = (email: string, password = TEST_PASSWORD) =>
    ctx.post('/api/v1/auth/login', { body: { email, password } });
  async function me(token: string): Promise<LightMyRequestResponse> {
    return ctx.get('/api/v1/auth/me', { token });
  }
  async function memberOf(org: Org, userId: string): Promise<TeamMember | undefined> {
    const res = await ctx.get(MEMBERS, { token: org.owner.token });
    expect(res.statusCode, res.body).toBe(200);
    return (res.json().data as TeamMember[]).find((m) => m.userId === userId);
  }
  async function create(client: Client, body: Record<string, unknown>): Promise<Record<string, unknown>> {
    const res = await client.post('/Users', body);
    const user = expectScim(res, 201);
    expect(res.headers.location).toBe(`${SCIM_BASE}/Users/${user.id as string}`);
    return user;
  }

  beforeAll(async () => {
    ctx = await TestContext.create();
    entra = await scimOrganization(ctx, 'Entra Org');
    okta = await scimOrganization(ctx, 'Okta Org');
  });
  afterAll(() => ctx?.close());

  describe('Microsoft Entra ID request bodies', () => {
    let client: Client;
    beforeAll(() => {
      client = entra.client;
    });

    it('Test Connection / "Get User by query - Zero results": 200 with an empty ListResponse', async () => {
      // [ENTRA-TUTORIAL] GET /Users?filter=userName eq "non-existent user"; "Test Connection" expects 200 + empty list.
      const resources = expectList(await client.get(`/Users${q('userName eq "non-existent user"')}`), 0);
      expect(resources).toEqual([]);
      // Test Connection uses a random GUID as the matching value.
      expectList(await client.get(`/Users${q('userName eq "5b50642d-79fc-4410-9e90-4c077cdd1a59"')}`), 0);
    });

    it('"Create User": 201 with Location, the id, externalId, userName, name, active and the work e-mail', async () => {
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

    it('"Requests to replace multiple attributes", without and with the aadOptscim062020 flag: 200, all applied', async () => {
      const user = await create(client, { schemas: [USER], userName: 'replace.many@entra.example' });
      const id = user.id as string;
      // [ENTRA-COMPAT] Requests to replace multiple attributes — without feature flag.
      const without = await client.patch(`/Users/${id}`, {
        schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
        Operations: [
          { op: 'Replace', path: 'displayName', value: 'Pvlo' },
          { op: 'Replace', path: 'emails[type eq "work"].value', value: 'TestBcwqnm@entra.example' },
          { op: 'Replace', path: 'name.givenName', value: 'Gtfd' },
          { op: 'Replace', path: 'name.familyName', value: 'Pkqf' },
          { op: 'Replace', path: 'externalId', value: 'Eqpj' },
          {
            op: 'Replace',
            path: 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:employeeNumber',
            value: 'Eqpj',
          },
        ],
      });
      expect(expectScim(without, 200)).toMatchObject({
        id,
        displayName: 'Pvlo',
        name: { givenName: 'Gtfd', familyName: 'Pkqf' },
        externalId: 'Eqpj',
        userName: 'replace.many@entra.example',
      });
      // [ENTRA-COMPAT] Requests to replace multiple attributes — with feature flag (a no-path replace, dotted keys).
      const withFlag = await client.patch(`/Users/${id}`, {
        schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
        Operations: [
          { op: 'replace', path: 'emails[type eq "work"].value', value: 'TestMhvaes@entra.example' },
          {
            op: 'replace',
            value: {
              displayName: 'Bjfe',
              'name.givenName': 'Kkom',
              'name.familyName': 'Unua',
              'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:employeeNumber': 'Aklq',
            },
          },
        ],
      });
      expect(expectScim(withFlag, 200)).toMatchObject({
        id,
        displayName: 'Bjfe',
        name: { givenName: 'Kkom', familyName: 'Unua' },
        externalId: 'Eqpj',
      });
      const stored = expectScim(await client.get(`/Users/${id}`), 200);
      expect(stored).toMatchObject({ displayName: 'Bjfe', name: { givenName: 'Kkom', familyName: 'Unua' } });
    });

    it('"Requests made to add a single-value string attribute" (nickName), "Add" and "add": 200, ignored', async () => {
      const user = await create(client, {
        schemas: [USER],
        userName: 'babs@entra.example',
        displayName: 'Barbara',
      });
      const id = user.id as string;
      // [ENTRA-COMPAT] Requests made to add a single-value string attribute — without and with feature flag.
      for (const op of ['Add', 'add']) {
        const res = await client.patch(`/Users/${id}`, {
          schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
          Operations: [{ op, path: 'nickName', value: 'Babs' }],
        });
        const body = expectScim(res, 200);
        expect(body).toMatchObject({
          id,
          userName: 'babs@entra.example',
          displayName: 'Barbara',
          active: true,
        });
        expect(body).not.toHaveProperty('nickName');
      }
      // An enterprise attribute by its full path (department, manager) is ignored too.
      const extension = await client.patch(`/Users/${id}`, {
        schemas: [PATCH_OP],
        Operations: [
          { op: 'Add', path: `${ENTERPRISE}:department`, value: 'Engineering' },
          { op: 'Add', path: `${ENTERPRISE}:manager`, value: '00aa00aa-bb11-cc22-dd33-44ee44ee44ee' },
          { op: 'Replace', path: 'title', value: 'Engineer' },
          { op: 'Replace', path: 'phoneNumbers[type eq "work"].value', value: '55555555555' },
          { op: 'Replace', path: 'addresses[type eq "work"].postalCode', value: '98052' },
          { op: 'Replace', path: 'preferredLanguage', value: 'en-US' },
        ],
      });
      expect(expectScim(extension, 200)).toMatchObject({ id, displayName: 'Barbara' });
      // A path that names nothing at all is refused, and the whole request with it.
      expectScimError(
        await client.patch(`/Users/${id}`, {
          schemas: [PATCH_OP],
          Operations: [
            { op: 'Replace', path: 'displayName', value: 'Changed' },
            { op: 'Replace', path: 'favouriteColour', value: 'blue' },
          ],
        }),
        400,
        'invalidValue',
      );
      expect(expectScim(await client.get(`/Users/${id}`), 200)).toMatchObject({ displayName: 'Barbara' });
    });

    it('"Example 5. … update a user": "Add" of manager, unqualified as Entra sends it or qualified, is ignored', async () => {
      const user = await create(client, { schemas: [USER], userName: 'managed@entra.example' });
      // [ENTRA-TUTORIAL] Build a SCIM endpoint, Example 5: PATCH "Add" path "manager" with a reference value.
      const res = await client.patch(`/Users/${user.id as string}`, {
        schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
        Operations: [
          {
            op: 'Add',
            path: 'manager',
            value: [
              {
                $ref: 'http://gov.test/scim/v2/Users/00aa00aa-bb11-cc22-dd33-44ee44ee44ee',
                value: '00aa00aa-bb11-cc22-dd33-44ee44ee44ee',
              },
            ],
          },
        ],
      });
      // `manager` belongs to the enterprise extension (RFC 7643 §4.3), which the service does not keep: the tutorial's
      // unqualified form is accepted and ignored like the qualified one, so that provisioning works on the first try.
      expect(expectScim(res, 200)).toMatchObject({ id: user.id, userName: 'managed@entra.example' });
      expect(expectScim(res, 200)).not.toHaveProperty('manager');
      // A path that names no attribute at all is still refused.
      expectScimError(
        await client.patch(`/Users/${user.id as string}`, {
          schemas: [PATCH_OP],
          Operations: [{ op: 'Add', path: 'favouriteColour', value: 'blue' }],
        }),
        400,
        'invalidValue',
      );
      const qualified = await client.patch(`/Users/${user.id as string}`, {
        schemas: [PATCH_OP],
        Operations: [
          { op: 'Add', path: `${ENTERPRISE}:manager`, value: '00aa00aa-bb11-cc22-dd33-44ee44ee44ee' },
        ],
      });
      expect(expectScim(qualified, 200)).toMatchObject({ id: user.id, userName: 'managed@entra.example' });
    });

    it('"Disable User" (boolean and the "False" string of the compatibility notes), then "True": 200 each', async () => {
      const user = await create(client, { schemas: [USER], userName: 'disable@entra.example' });
      const id = user.id as string;
      // [ENTRA-TUTORIAL] Disable User.
      const disabled = await client.patch(`/Users/${id}`, {
        Operations: [{ op: 'Replace', path: 'active', value: false }],
        schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
      });
      expect(expectScim(disabled, 200)).toMatchObject({
        id,
        userName: 'disable@entra.example',
        active: false,
      });
      expect(await memberOf(entra, id)).toMatchObject({ isActive: false });

      const enabled = await client.patch(`/Users/${id}`, {
        schemas: [PATCH_OP],
        Operations: [{ op: 'Replace', path: 'active', value: 'True' }],
      });
      expect(expectScim(enabled, 200)).toMatchObject({ active: true });
      // [ENTRA-COMPAT] Requests made to disable users — without feature flag ("False" as a string).
      const withoutFlag = await client.patch(`/Users/${id}`, {
        schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
        Operations: [{ op: 'Replace', path: 'active', value: 'False' }],
      });
      expect(expectScim(withoutFlag, 200)).toMatchObject({ active: false });
      // [ENTRA-COMPAT] … with feature flag.
      await client.patch(`/Users/${id}`, {
        schemas: [PATCH_OP],
        Operations: [{ op: 'replace', path: 'active', value: true }],
      });
      const withFlag = await client.patch(`/Users/${id}`, {
        schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
        Operations: [{ op: 'replace', path: 'active', value: false }],
      });
      expect(expectScim(withFlag, 200)).toMatchObject({ active: false });
      // A user is returned whether active or not (tutorial: "Soft-deleting a user active=false").
      expect(expectScim(await client.get(`/Users/${id}`), 200)).toMatchObject({ id, active: false });
      expectList(await client.get(`/Users${q('userName eq "disable@entra.example"')}`), 1);
      // Not a boolean at all: 400 invalidValue.
      expectScimError(
        await client.patch(`/Users/${id}`, {
          schemas: [PATCH_OP],
          Operations: [{ op: 'Replace', path: 'active', value: 'maybe' }],
        }),
        400,
        'invalidValue',
      );
    });

    it('"Delete User": 204, the membership inactive; re-assignment finds and re-enables the same user', async () => {
      const user = await create(client, { schemas: [USER], userName: 'delete@entra.example' });
      const id = user.id as string;
      // [ENTRA-TUTORIAL] Delete User: DELETE /Users/<id> → 204 No Content.
      const res = await client.delete(`/Users/${id}`);
      expect(res.statusCode, res.body).toBe(204);
      expect(res.body).toBe('');
      expect(await memberOf(entra, id)).toMatchObject({ isActive: false });
      // Soft deprovisioning: the user stays queryable, inactive, and comes back with active "True".
      const found = expectList(await client.get(`/Users${q('userName eq "delete@entra.example"')}`), 1);
      expect(found[0]).toMatchObject({ id, active: false });
      const back = await client.patch(`/Users/${id}`, {
        schemas: [PATCH_OP],
        Operations: [{ op: 'Replace', path: 'active', value: 'True' }],
      });
      expect(expectScim(back, 200)).toMatchObject({ id, active: true });
      expectScimError(await client.delete('/Users/5171a35d82074e068ce2'), 404);
    });

    it('"Create Group" and "Delete Group": 405, the groups are the fixed role buckets', async () => {
      // [ENTRA-TUTORIAL] Create Group.
      expectScimError(
        await client.post('/Groups', {
          schemas: [
            'urn:ietf:params:scim:schemas:core:2.0:Group',
            'http://schemas.microsoft.com/2006/11/ResourceManagement/ADSCIM/2.0/Group',
          ],
          externalId: '8aa1a0c0-c4c3-4bc0-b4a5-2ef676900159',
          displayName: 'displayName',
          meta: { resourceType: 'Group' },
        }),
        405,
      );
      // [ENTRA-TUTORIAL] Delete Group.
      expectScimError(await client.delete('/Groups/admin'), 405);
      expectList(await client.get('/Groups'), 4);
    });

    it('"Get Group" and "Get Group by displayName" with excludedAttributes=members: 200 without members', async () => {
      // [ENTRA-TUTORIAL] Get Group: GET /Groups/<id>?excludedAttributes=members.
      const group = expectScim(await client.get('/Groups/admin?excludedAttributes=members'), 200);
      expect(group).toMatchObject({ schemas: [GROUP], id: 'admin', displayName: 'admin' });
      expect(group).not.toHaveProperty('members');
      // [ENTRA-TUTORIAL] Get Group by displayName.
      const found = expectList(
        await client.get(
          `/Groups?excludedAttributes=members&filter=${encodeURIComponent('displayName eq "reviewer"')}`,
        ),
        1,
      );
      expect(found[0]).toMatchObject({ id: 'reviewer', displayName: 'reviewer' });
      expect(found[0]).not.toHaveProperty('members');
      expectList(await client.get(`/Groups${q('displayName eq "displayName"')}`), 0);
      expectScimError(await client.get('/Groups/40734ae655284ad3abcc?excludedAttributes=members'), 404);
    });

    it('"Update Group [Non-member attributes]": renaming a bucket is 400 mutability', async () => {
      // [ENTRA-TUTORIAL] Update Group [Non-member attributes].
      expectScimError(
        await client.patch('/Groups/admin', {
          schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
          Operations: [
            {
              op: 'Replace',
              path: 'displayName',
              value: '1879db59-3bdf-4490-ad68-ab880a269474updatedDisplayName',
            },
          ],
        }),
        400,
        'mutability',
      );
      expect(expectScim(await client.get('/Groups/admin'), 200)).toMatchObject({ displayName: 'admin' });
    });

    it('"Update Group [Add Members]" and "[Remove Members]" (both removal forms): 204, the role follows', async () => {
      const user = await create(client, { schemas: [USER], userName: 'grouped@entra.example' });
      const id = user.id as string;
      // [ENTRA-TUTORIAL] Update Group [Add Members].
      const add = {
        schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
        Operations: [{ op: 'Add', path: 'members', value: [{ $ref: null, value: id }] }],
      };
      let res = await client.patch('/Groups/admin', add);
      expect(res.statusCode, res.body).toBe(204);
      expect(res.body).toBe('');
      expect(await memberOf(entra, id)).toMatchObject({ role: 'admin' });
      const admins = expectScim(await client.get('/Groups/admin'), 200).members as { value: string }[];
      expect(admins.map((m) => m.value)).toContain(id);
      expect(expectScim(await client.get(`/Users/${id}`), 200).groups).toEqual([
        { value: 'admin', display: 'admin', $ref: `${SCIM_BASE}/Groups/admin` },
      ]);

      // [ENTRA-TUTORIAL] Update Group [Remove Members] (the compatibility notes' "without feature flag" form).
      res = await client.patch('/Groups/admin', {
        schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
        Operations: [{ op: 'Remove', path: 'members', value: [{ $ref: null, value: id }] }],
      });
      expect(res.statusCode, res.body).toBe(204);
      expect(await memberOf(entra, id)).toMatchObject({ role: 'member' });

      // [ENTRA-COMPAT] Requests to remove a group member — with feature flag (a filtered path, no value).
      expect((await client.patch('/Groups/reviewer', add)).statusCode).toBe(204);
      expect(await memberOf(entra, id)).toMatchObject({ role: 'viewer' });
      res = await client.patch('/Groups/reviewer', {
        schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
        Operations: [{ op: 'remove', path: `members[value eq "${id}"]` }],
      });
      expect(res.statusCode, res.body).toBe(204);
      expect(await memberOf(entra, id)).toMatchObject({ role: 'member' });

      // A member the organization does not have: 400, nothing changed.
      expectScimError(
        await client.patch('/Groups/admin', {
          schemas: [PATCH_OP],
          Operations: [
            { op: 'Add', path: 'members', value: [{ $ref: null, value: 'f648f8d5ea4e4cd38e9c' }] },
          ],
        }),
        400,
        'invalidValue',
      );
    });

    it('"Discover schema": GET /Schemas is a ListResponse with the User and Group schemas', async () => {
      // [ENTRA-TUTORIAL] Discover schema.
      const res = await ctx.get('/scim/v2/Schemas');
      const body = expectScim(res, 200);
      expect(body.schemas).toEqual([LIST]);
      const ids = (body.Resources as { id: string }[]).map((s) => s.id);
      expect(ids).toEqual(expect.arrayContaining([USER, GROUP]));
    });
  });

  describe('Microsoft Entra ID provisioning cycle', () => {
    it('query → create → query by externalId → update → disable ("False") → re-enable ("True") → group add/remove', async () => {
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
      expectErrorEnvelope(await loginRes(email), 401, 'ACCOUNT_DEACTIVATED');
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
      expectErrorEnvelope(await loginRes(email), 401, 'ACCOUNT_DEACTIVATED');
    });
  });

  describe('Okta request bodies', () => {
    let client: Client;
    beforeAll(() => {
      client = okta.client;
    });

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
      expectErrorEnvelope(await loginRes('test.user@okta.example', '1mz050nq'), 401, 'INVALID_CREDENTIALS');

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
      // [OKTA-SCIM20] "The group name update operation is triggered each time there is a group membership update
      // operation." A group linked to the `admin` bucket carries its name unchanged.
      const res = await client.patch('/Groups/admin', {
        schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
        Operations: [{ op: 'replace', value: { id: 'admin', displayName: 'admin' } }],
      });
      expect(res.statusCode, res.body).toBe(204);
    });

    it('"Update specific Group membership": remove by filtered path + add, then replace members: 204', async () => {
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

  describe('Okta provisioning cycle', () => {
    it('query → create → get → PUT → PATCH {active: false} → PATCH {active: true} → replace group members', async () => {
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
      expectErrorEnvelope(await loginRes(email), 401, 'ACCOUNT_DEACTIVATED');

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
