import { describe, expect, it } from 'vitest';
import { expectScimError } from './support/scim.js';
import { ENTERPRISE, expectList, expectScim, PATCH_OP, q, USER } from './support/scim-dialects.js';
import { scimDialectSuite } from './support/scim-suite.js';

/*
 * Microsoft Entra ID's PATCH requests beyond a single attribute, with and without its compatibility flag
 * ([ENTRA-TUTORIAL], [ENTRA-COMPAT]; the sources are listed in test/support/scim-dialects.ts): several attributes at
 * once, attributes the service does not keep (ignored, while a path naming nothing is refused), Disable User with
 * booleans and "True"/"False" strings, and Delete User as a soft deprovisioning.
 */

describe('SCIM dialects: Microsoft Entra ID and Okta', () => {
  const s = scimDialectSuite();
  const { memberOf, create } = s;

  describe('Microsoft Entra ID request bodies', () => {
    it('"Requests to replace multiple attributes", without and with the aadOptscim062020 flag: 200, all applied', async () => {
      const { client } = s.entra;
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
      const { client } = s.entra;
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
      const { client } = s.entra;
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
      const { entra } = s;
      const { client } = entra;
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
      const { entra } = s;
      const { client } = entra;
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
  });
});
