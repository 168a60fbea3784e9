import { describe, expect, it } from 'vitest';
import { auditEntriesOf } from './support/audit-entries.js';
import { expectScimError, patchOp } from './support/scim.js';
import { scimSuite } from './support/scim-suite.js';

/*
 * SCIM Groups, the four role buckets: listed and filtered, members moved between them all or nothing (the role
 * follows), and 400, 404 or 405 for whatever would change the buckets themselves or empty the owners'.
 */

describe('SCIM 2.0', () => {
  const s = scimSuite({ organizations: ['SCIM Org'], freshWindows: true });
  const { provision } = s;

  describe('Groups', () => {
    it('lists the four buckets, moves members between them, and refuses what would change the buckets themselves', async () => {
      const { ctx, owner, client } = s;
      const list = (await client.get('/Groups?excludedAttributes=members')).json();
      expect(list.Resources.map((g: { id: string }) => g.id)).toEqual([
        'owner',
        'admin',
        'member',
        'reviewer',
      ]);
      expect(list.Resources[0]).not.toHaveProperty('members');
      const filtered = (
        await client.get(`/Groups?filter=${encodeURIComponent('displayName eq "Admin"')}`)
      ).json();
      expect(filtered.Resources.map((g: { id: string }) => g.id)).toEqual(['admin']);

      const id = await provision('grouped@scim.example');
      const added = await client.patch(
        '/Groups/reviewer',
        patchOp({ op: 'add', path: 'members', value: [{ value: id }] }),
      );
      expect(added.statusCode, added.body).toBe(204);
      const reviewer = (await client.get('/Groups/reviewer')).json();
      expect(reviewer.members).toEqual([
        expect.objectContaining({ value: id, display: 'grouped@scim.example' }),
      ]);
      expect((await client.get(`/Users/${id}`)).json().groups[0].value).toBe('reviewer');
      const removed = await client.patch(
        '/Groups/reviewer',
        patchOp({ op: 'remove', path: `members[value eq "${id}"]` }),
      );
      expect(removed.statusCode, removed.body).toBe(204);
      expect((await client.get(`/Users/${id}`)).json().groups[0].value).toBe('member');
      const [updated] = (await auditEntriesOf(ctx, owner.organization.id, 'scim.group.updated')).slice(-1);
      expect(updated).toMatchObject({ metadata: { removed: [id], added: [] } });

      // All or nothing: an unknown member leaves the known one where it was.
      expectScimError(
        await client.patch(
          '/Groups/admin',
          patchOp({ op: 'add', path: 'members', value: [{ value: id }, { value: 'f'.repeat(24) }] }),
        ),
        400,
        'invalidValue',
      );
      expect((await client.get(`/Users/${id}`)).json().groups[0].value).toBe('member');
      expectScimError(
        await client.patch('/Groups/admin', patchOp({ op: 'replace', path: 'displayName', value: 'x' })),
        400,
        'mutability',
      );
      expectScimError(
        await client.patch('/Groups/admin', patchOp({ op: 'add', path: 'owners', value: [] })),
        400,
        'invalidValue',
      );
      expectScimError(
        await client.patch('/Groups/admins', patchOp({ op: 'add', path: 'members', value: [] })),
        404,
      );
      // The owner bucket cannot be emptied.
      expectScimError(
        await client.patch('/Groups/owner', patchOp({ op: 'remove', path: 'members' })),
        400,
        'invalidValue',
      );
      expectScimError(await client.post('/Groups', { displayName: 'new' }), 405);
      expectScimError(await client.put('/Groups/admin', { displayName: 'admin' }), 405);
      expectScimError(await client.delete('/Groups/admin'), 405);
      expectScimError(await client.get('/Groups/nothing'), 404);
    });
  });
});
