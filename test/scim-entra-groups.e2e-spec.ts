import { describe, expect, it } from 'vitest';
import { expectScimError } from './support/scim.js';
import {
  expectList,
  expectScim,
  GROUP,
  LIST,
  PATCH_OP,
  q,
  SCIM_BASE,
  USER,
} from './support/scim-dialects.js';
import { scimDialectSuite } from './support/scim-suite.js';

/*
 * Microsoft Entra ID's Group requests against the four fixed role buckets ([ENTRA-TUTORIAL], [ENTRA-COMPAT]; the
 * sources are listed in test/support/scim-dialects.ts): Create and Delete Group refused, Get Group with
 * excludedAttributes=members, a rename refused, members added and removed in both removal forms with the role
 * following; and schema discovery.
 */

describe('SCIM dialects: Microsoft Entra ID and Okta', () => {
  const s = scimDialectSuite();
  const { memberOf, create } = s;

  describe('Microsoft Entra ID request bodies', () => {
    it('"Create Group" and "Delete Group": 405, the groups are the fixed role buckets', async () => {
      const { client } = s.entra;
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
      const { client } = s.entra;
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
      const { client } = s.entra;
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
      const { entra } = s;
      const { client } = entra;
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
      const { ctx } = s;
      // [ENTRA-TUTORIAL] Discover schema.
      const res = await ctx.get('/scim/v2/Schemas');
      const body = expectScim(res, 200);
      expect(body.schemas).toEqual([LIST]);
      const ids = (body.Resources as { id: string }[]).map((s) => s.id);
      expect(ids).toEqual(expect.arrayContaining([USER, GROUP]));
    });
  });
});
