import { describe, expect, it } from 'vitest';
import { expectErrorEnvelope } from './support/assertions.js';
import { auditEntriesOf } from './support/audit-entries.js';
import { expectScimError, patchOp, scimUser, USER_SCHEMA } from './support/scim.js';
import { scimSuite } from './support/scim-suite.js';

/*
 * SCIM Users changed: PUT replaces a whole user (what is left out is cleared, a new userName moves the address);
 * PATCH applies whole or not at all; DELETE or active false deactivates (new sign-ins refused, open sessions last)
 * and active true reactivates, the last active owner staying.
 */

describe('SCIM 2.0', () => {
  const s = scimSuite({ organizations: ['SCIM Org'], freshWindows: true });
  const { provision } = s;

  describe('Users', () => {
    it('replaces a whole user with PUT: what is left out is cleared', async () => {
      const { client } = s;
      const id = await provision('put@scim.example', {
        externalId: 'put-1',
        displayName: 'Put Person',
        name: { givenName: 'Put', familyName: 'Person' },
      });
      const res = await client.put(`/Users/${id}`, { schemas: [USER_SCHEMA], userName: 'put@scim.example' });
      expect(res.statusCode, res.body).toBe(200);
      const user = res.json();
      expect(user).not.toHaveProperty('externalId');
      expect(user.name).toEqual({ formatted: 'put' });
      expect(user.displayName).toBe('put');
      expect(user.active).toBe(true);
      const renamed = await client.put(
        `/Users/${id}`,
        scimUser('put@scim.example', { name: { givenName: 'New' }, active: false }),
      );
      expect(renamed.json()).toMatchObject({ displayName: 'New', active: false });
      expectScimError(await client.put(`/Users/${id}`, { schemas: [USER_SCHEMA] }), 400, 'invalidValue');
      // A new userName: the account's address changes, unless another account has it.
      const moved = await client.put(`/Users/${id}`, scimUser('put-moved@scim.example'));
      expect(moved.json().userName).toBe('put-moved@scim.example');
      await provision('taken@scim.example');
      expectScimError(await client.put(`/Users/${id}`, scimUser('TAKEN@scim.example')), 409, 'uniqueness');
    });

    it('applies a PATCH whole or not at all', async () => {
      const { ctx, owner, client } = s;
      const id = await provision('patch@scim.example', { displayName: 'Before' });
      const before = (await client.get(`/Users/${id}`)).json();
      const bad = await client.patch(
        `/Users/${id}`,
        patchOp(
          { op: 'replace', path: 'displayName', value: 'After' },
          { op: 'replace', path: 'noSuchThing', value: 1 },
        ),
      );
      expectScimError(bad, 400, 'invalidValue');
      expect((await client.get(`/Users/${id}`)).json()).toEqual(before);
      expectScimError(await client.patch(`/Users/${id}`, patchOp({ op: 'remove' })), 400, 'noTarget');
      expectScimError(
        await client.patch(`/Users/${id}`, patchOp({ op: 'move', path: 'displayName', value: 'x' })),
        400,
        'invalidValue',
      );
      expectScimError(
        await client.patch(`/Users/${id}`, { schemas: [], Operations: [] }),
        400,
        'invalidValue',
      );
      expectScimError(
        await client.patch(`/Users/${id}`, patchOp({ op: 'remove', path: 'userName' })),
        400,
        'invalidValue',
      );

      const ok = await client.patch(
        `/Users/${id}`,
        patchOp(
          { op: 'Replace', path: 'displayName', value: 'After' },
          { op: 'add', path: 'name.givenName', value: 'Pat' },
          { op: 'ADD', path: 'externalId', value: ['ext-p'] },
          { op: 'replace', path: 'emails[type eq "work"].value', value: 'patch@scim.example' },
          {
            op: 'replace',
            path: 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department',
            value: 'X',
          },
          { op: 'replace', value: { title: 'Ignored', 'name.familyName': 'Ch' } },
        ),
      );
      expect(ok.statusCode, ok.body).toBe(200);
      expect(ok.json()).toMatchObject({
        displayName: 'After',
        externalId: 'ext-p',
        name: { givenName: 'Pat', familyName: 'Ch' },
        meta: { version: expect.not.stringMatching(before.meta.version) },
      });
      const removed = await client.patch(
        `/Users/${id}`,
        patchOp({ op: 'remove', path: 'externalId' }, { op: 'remove', path: 'displayName' }),
      );
      expect(removed.json()).not.toHaveProperty('externalId');
      expect(removed.json().displayName).toBe('Pat Ch');
      const updates = await auditEntriesOf(ctx, owner.organization.id, 'scim.user.updated');
      expect(updates.at(-1)).toMatchObject({
        metadata: { via: 'patch', changed: ['displayName', 'externalId'] },
      });
    });

    it('deactivates with DELETE or active false, which stops sign-in (open sessions last), and reactivates', async () => {
      const { ctx, owner, client } = s;
      const member = await ctx.addMember(owner.organization.id, 'member');
      const [found] = (
        await client.get(`/Users?filter=${encodeURIComponent(`userName eq "${member.email}"`)}`)
      ).json().Resources;
      expect(found.active).toBe(true);
      const deleted = await client.delete(`/Users/${found.id}`);
      expect(deleted.statusCode).toBe(204);
      expect(deleted.body).toBe('');
      expect((await client.get(`/Users/${found.id}`)).json().active).toBe(false);
      // The open session lasts until it expires or is revoked; a new sign-in is refused.
      expect((await ctx.get('/api/v1/auth/me', { token: member.token })).statusCode).toBe(200);
      expectErrorEnvelope(
        await ctx.post('/api/v1/auth/login', {
          body: { email: member.email, password: 'Sup3r-Secret-pass' },
        }),
        401,
        'ACCOUNT_DEACTIVATED',
      );
      // A suspension from the team API, unlike SCIM, ends open sessions at once.
      const other = await ctx.addMember(owner.organization.id, 'member');
      const suspended = await ctx.patch(`/api/v1/team/members/${other.userId}/status`, {
        token: owner.token,
        body: {},
      });
      expect(suspended.statusCode, suspended.body).toBe(200);
      expectErrorEnvelope(
        await ctx.get('/api/v1/auth/me', { token: other.token }),
        401,
        'ACCOUNT_DEACTIVATED',
      );
      const back = await client.patch(
        `/Users/${found.id}`,
        patchOp({ op: 'replace', value: { active: 'True' } }),
      );
      expect(back.json().active).toBe(true);
      expect((await ctx.get('/api/v1/auth/me', { token: member.token })).statusCode).toBe(200);
      const [off] = (await auditEntriesOf(ctx, owner.organization.id, 'scim.user.deactivated')).slice(-1);
      const [on] = (await auditEntriesOf(ctx, owner.organization.id, 'scim.user.reactivated')).slice(-1);
      expect(off).toMatchObject({ targetId: found.id, metadata: { via: 'delete' } });
      expect(on).toMatchObject({ targetId: found.id, metadata: { via: 'patch' } });
      expect(on!.sequence).toBeGreaterThan(off!.sequence);

      // The last active owner stays.
      const [self] = (
        await client.get(`/Users?filter=${encodeURIComponent(`userName eq "${owner.user.email}"`)}`)
      ).json().Resources;
      expectScimError(await client.delete(`/Users/${self.id}`), 400, 'invalidValue');
      expect((await ctx.get('/api/v1/auth/me', { token: owner.token })).statusCode).toBe(200);
    });
  });
});
