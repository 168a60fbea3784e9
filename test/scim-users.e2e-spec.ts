import { describe, expect, it } from 'vitest';
import { auditEntriesOf } from './support/audit-entries.js';
import {
  expectScimError,
  LIST_SCHEMA,
  patchOp,
  scimOrganization,
  scimUser,
  USER_SCHEMA,
} from './support/scim.js';
import { scimSuite } from './support/scim-suite.js';

/*
 * SCIM Users, created and read: provisioning with meta, Location, the role from the groups and its audit; the
 * refusal of a taken or unusable userName; ids kept to the token's organization; paging with startIndex and count;
 * the attributes and excludedAttributes projections. Replacing, patching and deactivating are in
 * scim-users-update.e2e-spec.ts, filters in scim-filtering.e2e-spec.ts.
 */

describe('SCIM 2.0', () => {
  const s = scimSuite({ organizations: ['SCIM Org'], freshWindows: true });
  const { provision, filter } = s;

  describe('Users', () => {
    it('provisions atomically with meta, a Location and the role from the groups, audited with the token id', async () => {
      const { ctx, owner, client } = s;
      await ctx.request('PUT', '/api/v1/sso/config', {
        token: owner.token,
        body: {
          provider: 'oidc',
          emailDomains: ['scim-roles.example'],
          roleMappingRules: [
            { pattern: '^gov-admins$', role: 'admin' },
            { pattern: 'auditors', role: 'viewer' },
          ],
          oidc: { issuer: 'https://idp.scim-roles.example', clientId: 'c', clientSecret: 's' },
        },
      });
      const res = await client.post('/Users', {
        schemas: [USER_SCHEMA],
        userName: 'Grace@SCIM.example',
        externalId: 'ext-grace',
        name: { givenName: 'Grace', familyName: 'Hopper' },
        emails: [{ value: 'grace@scim.example', primary: true, type: 'work' }],
        groups: [{ display: 'gov-admins', value: 'g-1' }],
        'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User': { department: 'Navy' },
      });
      expect(res.statusCode, res.body).toBe(201);
      const user = res.json();
      expect(res.headers.location).toBe(user.meta.location);
      expect(user).toMatchObject({
        schemas: [USER_SCHEMA],
        userName: 'grace@scim.example',
        externalId: 'ext-grace',
        displayName: 'Grace Hopper',
        active: true,
        name: { givenName: 'Grace', familyName: 'Hopper' },
        emails: [{ value: 'grace@scim.example', primary: true }],
        groups: [expect.objectContaining({ value: 'admin' })],
        meta: {
          resourceType: 'User',
          created: expect.any(String),
          lastModified: expect.any(String),
          location: `${ctx.config.publicUrl}/scim/v2/Users/${user.id}`,
          version: expect.stringMatching(/^W\//),
        },
      });
      const [audit] = (await auditEntriesOf(ctx, owner.organization.id, 'scim.user.created')).filter(
        (e) => e.targetId === user.id,
      );
      expect(audit).toMatchObject({
        metadata: { externalId: 'ext-grace', roleDecision: { role: 'admin', groups: ['gov-admins', 'g-1'] } },
      });
      expect(audit.metadata.tokenId).toMatch(/^[0-9a-f]{24}$/);
      // The fallbacks: given and family names, then the address's local part.
      const bare = (await client.get(`/Users/${await provision('plain.person@scim.example')}`)).json();
      expect(bare.displayName).toBe('plain.person');
      expect(bare.groups[0].value).toBe('member');
    });

    it('refuses a taken userName in any case, and bodies without a usable userName, changing nothing', async () => {
      const { ctx, client } = s;
      await provision('dup@scim.example');
      expectScimError(await client.post('/Users', scimUser('DUP@scim.EXAMPLE')), 409, 'uniqueness');
      // An address with an account elsewhere: this IdP cannot take it over.
      const elsewhere = await ctx.register({ organizationName: 'Elsewhere' });
      expectScimError(await client.post('/Users', scimUser(elsewhere.user.email)), 409, 'uniqueness');
      expectScimError(
        await client.post('/Users', { schemas: [USER_SCHEMA], displayName: 'No name' }),
        400,
        'invalidValue',
      );
      expectScimError(await client.post('/Users', scimUser('not-an-address')), 400, 'invalidValue');
      expectScimError(
        await client.post('/Users', scimUser('a@b.example', { active: 'maybe' })),
        400,
        'invalidValue',
      );
      expectScimError(await client.post('/Users', '{"userName": '), 400, 'invalidSyntax');
      expectScimError(await client.post('/Users', '[1,2]'), 400, 'invalidSyntax');
      expect(await filter('userName eq "a@b.example"')).toEqual([]);
      // Plain JSON is accepted as well as SCIM JSON.
      const plain = await client.call('POST', '/Users', scimUser('plain-json@scim.example'), {
        'content-type': 'application/json',
      });
      expect(plain.statusCode, plain.body).toBe(201);
    });

    it('keeps ids to the organization: another organization’s user, or no id, is 404', async () => {
      const { ctx, client } = s;
      const other = await scimOrganization(ctx, 'Other SCIM');
      const foreign = (await other.client.post('/Users', scimUser('foreign@other-scim.example'))).json()
        .id as string;
      expectScimError(await client.get(`/Users/${foreign}`), 404);
      expectScimError(
        await client.patch(`/Users/${foreign}`, patchOp({ op: 'replace', path: 'active', value: false })),
        404,
      );
      expectScimError(await client.put(`/Users/${foreign}`, scimUser('foreign@other-scim.example')), 404);
      expectScimError(await client.delete(`/Users/${foreign}`), 404);
      expectScimError(await client.get('/Users/not-an-id'), 404);
      expect((await other.client.get(`/Users/${foreign}`)).json().active).toBe(true);
      expect(await filter('userName eq "foreign@other-scim.example"')).toEqual([]);
    });

    it('pages through 205 users with startIndex and count, count clamped to 200', async () => {
      const { ctx } = s;
      const paging = await scimOrganization(ctx, 'Paging');
      for (let i = 0; i < 204; i++) {
        const res = await paging.client.post(
          '/Users',
          scimUser(`p${String(i).padStart(3, '0')}@paging.example`),
        );
        expect(res.statusCode).toBe(201);
      }
      const seen: string[] = [];
      for (let start = 1; start <= 205; start += 50) {
        const page = (await paging.client.get(`/Users?startIndex=${start}&count=50`)).json();
        expect(page).toMatchObject({ schemas: [LIST_SCHEMA], totalResults: 205, startIndex: start });
        expect(page.itemsPerPage).toBe(Math.min(50, 206 - start));
        seen.push(...page.Resources.map((r: { id: string }) => r.id));
      }
      expect(new Set(seen).size).toBe(205);
      const first = (await paging.client.get('/Users')).json();
      expect(first.itemsPerPage).toBe(100);
      const clamped = (await paging.client.get('/Users?count=5000')).json();
      expect(clamped.itemsPerPage).toBe(200);
      const none = (await paging.client.get('/Users?count=0')).json();
      expect(none).toMatchObject({ totalResults: 205, itemsPerPage: 0, Resources: [] });
      const past = (await paging.client.get('/Users?startIndex=500')).json();
      expect(past).toMatchObject({ totalResults: 205, itemsPerPage: 0 });
      expectScimError(await paging.client.get('/Users?count=abc'), 400, 'invalidValue');
    });

    it('returns only the attributes asked for, or all but the excluded ones', async () => {
      const { client } = s;
      const id = await provision('attrs@scim.example', { name: { givenName: 'At', familyName: 'Trs' } });
      const only = (await client.get(`/Users/${id}?attributes=userName,name.givenName`)).json();
      expect(only).toEqual({
        schemas: [USER_SCHEMA],
        id,
        userName: 'attrs@scim.example',
        name: { givenName: 'At' },
      });
      const without = (await client.get(`/Users/${id}?excludedAttributes=emails,groups,meta.version`)).json();
      expect(without).not.toHaveProperty('emails');
      expect(without).not.toHaveProperty('groups');
      expect(without.meta).not.toHaveProperty('version');
      expect(without.meta.location).toEqual(expect.any(String));
      const listed = (
        await client.get(
          '/Users?attributes=userName&filter=' + encodeURIComponent('userName eq "attrs@scim.example"'),
        )
      ).json();
      expect(listed.Resources).toEqual([{ schemas: [USER_SCHEMA], id, userName: 'attrs@scim.example' }]);
    });
  });
});
