import { describe, expect, it } from 'vitest';
import { expectErrorEnvelope } from './support/assertions.js';
import { expectScimError, PATCH_SCHEMA, patchOp, provisionUser, scimUser } from './support/scim.js';
import { scimEmailSuite, WORK_PATH } from './support/scim-emails.js';

/*
 * Issue 29, item 8: the `emails` an organization's IdP writes over SCIM (PATCH with and without a path, POST, PUT) are
 * kept for that organization and returned exactly as written, so that the IdP sees no drift; the primary (else the
 * first) work address is the contact address the filters compare, and the sign-in address stays the userName.
 * Invalid e-mails are refused whole. Item 7 (names) is in scim-names.e2e-spec.ts; both share
 * test/support/scim-emails.ts. See docs/identity-administrators.md, "SCIM provisioning".
 */

describe('SCIM e-mails and per-organization names', () => {
  const s = scimEmailSuite(['Contoso']);
  const {
    address,
    provisionLikeEntra,
    scimGet,
    entraEmailPatch,
    filterIds,
    updates,
    memberIn,
    login,
    givePassword,
  } = s;

  describe('emails (item 8)', () => {
    it('Entra ID’s work e-mail PATCH round trip: stored as written, no drift, the sign-in address unchanged', async () => {
      const [contoso] = s.orgs;
      const userName = address('megan.bowen');
      const created = await provisionLikeEntra(contoso, userName);
      expect(created.emails).toEqual([{ value: userName, type: 'work', primary: true }]);
      const id = created.id;
      const expected = [{ value: 'alias@contoso.example', type: 'work', primary: true }];

      const added = await contoso.client.patch(
        `/Users/${id}`,
        entraEmailPatch('Add', 'alias@contoso.example'),
      );
      expect(added.statusCode, added.body).toBe(200);
      expect(added.json()).toMatchObject({ userName, emails: expected });
      const stored = await scimGet(contoso, id);
      expect(stored.emails).toEqual(expected);
      expect(stored.userName).toBe(userName);
      const first = await updates(contoso, id);
      expect(first).toHaveLength(1);
      expect(first[0]!.metadata).toMatchObject({ via: 'patch', changed: ['emails'] });

      // Entra ID compares what it reads back with what it wrote and sends the same PATCH again: nothing changes.
      for (const op of ['Replace', 'Add', 'Replace'] as const) {
        const again = await contoso.client.patch(
          `/Users/${id}`,
          entraEmailPatch(op, 'alias@contoso.example'),
        );
        expect(again.statusCode, again.body).toBe(200);
        expect(again.json().emails).toEqual(expected);
      }
      const reread = await scimGet(contoso, id);
      expect(reread.emails).toEqual(expected);
      expect((reread.meta as { version: string }).version).toBe((stored.meta as { version: string }).version);
      expect(await updates(contoso, id)).toHaveLength(1);

      // The work e-mail is the contact address the filters compare; the userName still finds the user by userName.
      expect(await filterIds(contoso, 'emails[type eq "work"].value eq "alias@contoso.example"')).toEqual([
        id,
      ]);
      expect(await filterIds(contoso, 'emails[type eq "work" and value eq "alias@contoso.example"]')).toEqual(
        [id],
      );
      expect(await filterIds(contoso, `emails.value eq "${userName}"`)).toEqual([]);
      expect(await filterIds(contoso, `userName eq "${userName}"`)).toEqual([id]);

      // The sign-in address is the userName: the team list shows it, a password login takes it and not the alias.
      expect(await memberIn(contoso.owner.token, id)).toMatchObject({ email: userName });
      await givePassword(id);
      expectErrorEnvelope(await login('alias@contoso.example'), 401, 'INVALID_CREDENTIALS');
      const signedIn = await login(userName);
      expect(signedIn.statusCode, signedIn.body).toBe(200);
      expect(signedIn.json().data.user).toMatchObject({ id, email: userName });
    });

    it('stores a no-path replace of emails, POST and PUT emails as written; a user never given any shows the userName', async () => {
      const { ctx } = s;
      const [contoso] = s.orgs;
      // Never written: the userName as the primary work address, for SCIM and for other members alike.
      const plain = address('plain');
      const plainId = await provisionUser(contoso.client, plain, { displayName: 'Plain Person' });
      expect((await scimGet(contoso, plainId)).emails).toEqual([
        { value: plain, type: 'work', primary: true },
      ]);
      const member = await ctx.addMember(contoso.owner.organization.id, 'member');
      expect((await scimGet(contoso, member.userId)).emails).toEqual([
        { value: member.email, type: 'work', primary: true },
      ]);
      // A PATCH of something else writes no emails.
      const renamed = await contoso.client.patch(
        `/Users/${plainId}`,
        patchOp({ op: 'replace', path: 'displayName', value: 'Still Plain' }),
      );
      expect(renamed.json().emails).toEqual([{ value: plain, type: 'work', primary: true }]);

      // The no-path replace (Entra ID with its compliance flag, Okta).
      const list = [
        { value: 'Work.Address@Contoso.Example', type: 'work', primary: true },
        { value: 'home.address@personal.example', type: 'home' },
      ];
      const replaced = await contoso.client.patch(
        `/Users/${plainId}`,
        patchOp({ op: 'replace', value: { emails: list } }),
      );
      expect(replaced.statusCode, replaced.body).toBe(200);
      expect(replaced.json()).toMatchObject({ userName: plain, emails: list });
      expect((await scimGet(contoso, plainId)).emails).toEqual(list);
      const count = (await updates(contoso, plainId)).length;
      const same = await contoso.client.patch(
        `/Users/${plainId}`,
        patchOp({ op: 'replace', value: { emails: list } }),
      );
      expect(same.json().emails).toEqual(list);
      expect(await updates(contoso, plainId)).toHaveLength(count);
      // The contact address is the primary work one; the home address is not one.
      expect(await filterIds(contoso, 'emails.value eq "work.address@contoso.example"')).toEqual([plainId]);
      expect(await filterIds(contoso, 'emails.value eq "home.address@personal.example"')).toEqual([]);

      // POST with emails.
      const posted = address('posted');
      const postedList = [
        { value: 'Desk@Contoso.Example', type: 'work' },
        { value: 'posted.other@contoso.example', type: 'other', primary: true },
      ];
      const created = await contoso.client.post('/Users', scimUser(posted, { emails: postedList }));
      expect(created.statusCode, created.body).toBe(201);
      expect(created.json()).toMatchObject({ userName: posted, emails: postedList });
      const postedId = created.json().id as string;
      expect((await scimGet(contoso, postedId)).emails).toEqual(postedList);
      // No primary work address: the first work one is the contact address.
      expect(await filterIds(contoso, 'emails.value eq "desk@contoso.example"')).toEqual([postedId]);

      // PUT with emails replaces them, as written; a PUT without them goes back to the userName.
      const putList = [{ value: 'put.work@contoso.example', type: 'work', primary: true }];
      const put = await contoso.client.put(`/Users/${postedId}`, scimUser(posted, { emails: putList }));
      expect(put.statusCode, put.body).toBe(200);
      expect(put.json()).toMatchObject({ userName: posted, emails: putList });
      expect((await scimGet(contoso, postedId)).emails).toEqual(putList);
      const cleared = await contoso.client.put(`/Users/${postedId}`, scimUser(posted));
      expect(cleared.json().emails).toEqual([{ value: posted, type: 'work', primary: true }]);
      // The sign-in addresses never moved.
      expect(await memberIn(contoso.owner.token, plainId)).toMatchObject({ email: plain });
      expect(await memberIn(contoso.owner.token, postedId)).toMatchObject({ email: posted });
    });

    it('refuses invalid emails with 400 invalidValue and changes nothing', async () => {
      const [contoso] = s.orgs;
      const userName = address('strict');
      const written = [{ value: 'kept@contoso.example', type: 'work', primary: true }];
      const id = await provisionUser(contoso.client, userName, { emails: written });
      const before = await scimGet(contoso, id);
      const auditBefore = (await updates(contoso, id)).length;
      const eleven = Array.from({ length: 11 }, (_, i) => ({ value: `a${i}@contoso.example`, type: 'work' }));
      const ten = eleven.slice(0, 10);
      const invalid: unknown[] = [
        'bare@contoso.example',
        ['bare@contoso.example'],
        [null],
        [42],
        [[{ value: 'nested@contoso.example' }]],
        [{ type: 'work' }],
        [{ value: 42, type: 'work' }],
        [{ value: { value: 'x@contoso.example' }, type: 'work' }],
        [{ value: '', type: 'work' }],
        [{ value: `${'x'.repeat(250)}@contoso.example`, type: 'work' }],
        [...written, { value: 7 }],
        eleven,
      ];
      for (const emails of invalid) {
        const label = JSON.stringify(emails).slice(0, 80);
        const noPath = await contoso.client.patch(
          `/Users/${id}`,
          patchOp({ op: 'replace', value: { emails } }),
        );
        expect(noPath.statusCode, label).toBe(400);
        expectScimError(noPath, 400, 'invalidValue');
        expectScimError(
          await contoso.client.patch(
            `/Users/${id}`,
            patchOp({ op: 'replace', path: 'emails', value: emails }),
          ),
          400,
          'invalidValue',
        );
        expectScimError(
          await contoso.client.put(`/Users/${id}`, scimUser(userName, { emails })),
          400,
          'invalidValue',
        );
        const fresh = address('refused');
        expectScimError(
          await contoso.client.post('/Users', scimUser(fresh, { emails })),
          400,
          'invalidValue',
        );
        expect(await filterIds(contoso, `userName eq "${fresh}"`)).toEqual([]);
      }
      // The work-address path takes a string, not an object or a number.
      for (const value of [42, { value: 42 }, '', null]) {
        const res = await contoso.client.patch(`/Users/${id}`, {
          schemas: [PATCH_SCHEMA],
          Operations: [{ op: 'Replace', path: WORK_PATH, value }],
        });
        expectScimError(res, 400, 'invalidValue');
      }
      // Ten written, an add of one more is the eleventh; all or nothing with a valid operation beside it.
      expectScimError(
        await contoso.client.patch(
          `/Users/${id}`,
          patchOp(
            { op: 'replace', path: 'displayName', value: 'Half Applied' },
            { op: 'add', path: 'emails', value: ten },
          ),
        ),
        400,
        'invalidValue',
      );
      expect(await scimGet(contoso, id)).toEqual(before);
      expect(await updates(contoso, id)).toHaveLength(auditBefore);
      // Exactly ten is fine.
      const full = await contoso.client.patch(
        `/Users/${id}`,
        patchOp({ op: 'replace', value: { emails: ten } }),
      );
      expect(full.statusCode, full.body).toBe(200);
      expect(full.json().emails).toEqual(ten);
      expectScimError(
        await contoso.client.patch(
          `/Users/${id}`,
          patchOp({
            op: 'add',
            path: 'emails',
            value: [{ value: 'one.more@contoso.example', type: 'home' }],
          }),
        ),
        400,
        'invalidValue',
      );
      expect((await scimGet(contoso, id)).emails).toEqual(ten);
    });
  });
});
