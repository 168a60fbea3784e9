import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../libs/identity/src/auth/password.js';
import { users } from '../libs/identity/src/users/user.schema.js';
import { TEST_PASSWORD, TestContext } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';
import { MailCatcher } from './support/mail-catcher.js';
import {
  expectScimError,
  PATCH_SCHEMA,
  patchOp,
  scimOrganization,
  scimUser,
  USER_SCHEMA,
} from './support/scim.js';
import { type AuditEntry, MEMBERS, type TeamMember } from './support/team-suite.js';

/*
 * Issue 29, items 7 and 8: what an organization's IdP writes over SCIM (emails, displayName, name) is
 * kept for that organization and returned exactly as written, so that the IdP sees no drift; the account itself
 * (its sign-in address, its name) follows the IdP only when the account is the organization's own and unshared.
 * See docs/identity-administrators.md, "SCIM provisioning".
 */

const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
const WORK_PATH = 'emails[type eq "work"].value';
const INVITES = '/api/v1/team/invites';
const CHOSEN_PASSWORD = 'Chosen-Pass-4242';

type Org = Awaited<ReturnType<typeof scimOrganization>>;
interface ScimEmail {
  value: string;
  type?: string;
  primary?: boolean;
}

describe('SCIM e-mails and per-organization names', () => {
  let ctx: TestContext;
  let mail: MailCatcher;
  let counter = 0;
  /** A fresh address in the IdP's domain. */
  const address = (prefix: string) => `${prefix}.${++counter}@contoso.example`;

  beforeAll(async () => {
    mail = await MailCatcher.start();
    ctx = await TestContext.create({ config: { smtpUrl: mail.url } });
  });
  afterAll(async () => {
    await ctx?.close();
    await mail?.stop();
  });

  /** Entra ID's "Create User" body (Microsoft Learn, SCIM tutorial): the work e-mail is the userName. */
  async function provisionLikeEntra(
    org: Org,
    userName: string,
    name = { givenName: 'Ada', familyName: 'Lovelace' },
  ) {
    const res = await org.client.post('/Users', {
      schemas: [USER_SCHEMA, ENTERPRISE],
      externalId: `ext-${userName}`,
      userName,
      active: true,
      emails: [{ primary: true, type: 'work', value: userName }],
      meta: { resourceType: 'User' },
      name: { formatted: `${name.givenName} ${name.familyName}`, ...name },
      roles: [],
    });
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as { id: string; userName: string; emails: ScimEmail[] };
  }
  async function provision(org: Org, userName: string, extra: Record<string, unknown> = {}): Promise<string> {
    const res = await org.client.post('/Users', scimUser(userName, extra));
    expect(res.statusCode, res.body).toBe(201);
    return res.json().id as string;
  }
  async function scimGet(org: Org, id: string): Promise<Record<string, unknown>> {
    const res = await org.client.get(`/Users/${id}`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  }
  /** Entra ID's exact PATCH of the work e-mail ("Add" or "Replace", capitalised). */
  const entraEmailPatch = (op: 'Add' | 'Replace', value: string) => ({
    schemas: [PATCH_SCHEMA],
    Operations: [{ op, path: WORK_PATH, value }],
  });
  async function filterIds(org: Org, filter: string): Promise<string[]> {
    const res = await org.client.get(`/Users?filter=${encodeURIComponent(filter)}`);
    expect(res.statusCode, res.body).toBe(200);
    return (res.json().Resources as { id: string }[]).map((r) => r.id);
  }
  async function updates(org: Org, userId: string): Promise<AuditEntry[]> {
    const res = await ctx.get('/api/v1/audit', {
      token: org.owner.token,
      query: { eventType: 'scim.user.updated', limit: '100' },
    });
    expect(res.statusCode, res.body).toBe(200);
    return (res.json().data as AuditEntry[]).filter((e) => e.targetId === userId);
  }
  async function memberIn(ownerToken: string, userId: string): Promise<TeamMember | undefined> {
    const res = await ctx.get(MEMBERS, { token: ownerToken });
    expect(res.statusCode, res.body).toBe(200);
    return (res.json().data as TeamMember[]).find((m) => m.userId === userId);
  }
  const login = (email: string, password = TEST_PASSWORD) =>
    ctx.post('/api/v1/auth/login', { body: { email, password } });
  /** Gives a provisioned account (no password) the test password, so that its holder can sign in. */
  async function givePassword(userId: string): Promise<void> {
    await ctx.db.db
      .update(users)
      .set({ passwordHash: await hashPassword(TEST_PASSWORD) })
      .where(eq(users.id, userId));
  }
  /** An invitation from `ownerToken`'s organization to `email`: its id and the e-mailed token. */
  async function invite(ownerToken: string, email: string): Promise<{ id: string; token: string }> {
    const before = mail.forRecipient(email).length;
    const res = await ctx.post('/api/v1/team/invite', { token: ownerToken, body: { email, role: 'member' } });
    expect(res.statusCode, res.body).toBe(201);
    const deadline = Date.now() + 5000;
    while (mail.forRecipient(email).length <= before) {
      if (Date.now() > deadline) throw new Error(`No invitation e-mail to ${email}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    return {
      id: res.json().data.id,
      token: MailCatcher.tokenFrom(mail.forRecipient(email).at(-1)!, '/invite/'),
    };
  }
  const accept = (token: string, body: Record<string, unknown> = {}) =>
    ctx.post(`${INVITES}/${token}/accept`, { body });

  describe('emails (item 8)', () => {
    let contoso: Org;
    beforeAll(async () => {
      contoso = await scimOrganization(ctx, 'Contoso');
    });

    it('Entra ID’s work e-mail PATCH round trip: stored as written, no drift, the sign-in address unchanged', async () => {
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
      // Never written: the userName as the primary work address, for SCIM and for other members alike.
      const plain = address('plain');
      const plainId = await provision(contoso, plain, { displayName: 'Plain Person' });
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
      const userName = address('strict');
      const written = [{ value: 'kept@contoso.example', type: 'work', primary: true }];
      const id = await provision(contoso, userName, { emails: written });
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

  describe('displayName, name and userName per organization (item 7)', () => {
    let contoso: Org;
    let fabrikam: Org;
    beforeAll(async () => {
      contoso = await scimOrganization(ctx, 'Contoso Names');
      fabrikam = await scimOrganization(ctx, 'Fabrikam');
    });

    it('an account shared with another organization keeps its name and address whatever one IdP writes', async () => {
      const email = address('shared');
      const { id } = await provisionLikeEntra(contoso, email, { givenName: 'Pat', familyName: 'Idp' });
      expect(await memberIn(contoso.owner.token, id)).toMatchObject({ name: 'Pat Idp', email });

      // Fabrikam invites the same address. The SCIM-made account is unproven: the mailbox claims it with its own
      // name and password; from then on it is nobody's own.
      const { token } = await invite(fabrikam.owner.token, email);
      expectErrorEnvelope(await accept(token), 400, 'VALIDATION_ERROR');
      expectErrorEnvelope(await accept(token, { password: CHOSEN_PASSWORD }), 400, 'VALIDATION_ERROR');
      const claimed = await accept(token, { name: 'Pat Person', password: CHOSEN_PASSWORD });
      expect(claimed.statusCode, claimed.body).toBe(200);
      expect(claimed.json().data).toMatchObject({
        user: { id, email, name: 'Pat Person' },
        organization: { id: fabrikam.owner.organization.id },
      });
      const person = claimed.json().data.token as string;

      // Contoso's IdP renames its view of the person.
      const patched = await contoso.client.patch(
        `/Users/${id}`,
        patchOp(
          { op: 'Replace', path: 'displayName', value: 'Pat (Contoso)' },
          { op: 'Replace', path: 'name.givenName', value: 'Patricia' },
        ),
      );
      expect(patched.statusCode, patched.body).toBe(200);
      expect(patched.json()).toMatchObject({
        displayName: 'Pat (Contoso)',
        name: { givenName: 'Patricia', familyName: 'Idp' },
      });
      expect(await scimGet(contoso, id)).toMatchObject({
        displayName: 'Pat (Contoso)',
        name: { givenName: 'Patricia', familyName: 'Idp' },
      });
      expect(await filterIds(contoso, 'displayName eq "Pat (Contoso)"')).toEqual([id]);
      const renames = await updates(contoso, id);
      expect(renames.at(-1)!.metadata).toMatchObject({ changed: ['displayName', 'name.givenName'] });

      // The account's own name is the one the person chose: for the person, and in Fabrikam.
      const me = await ctx.get('/api/v1/auth/me', { token: person });
      expect(me.statusCode, me.body).toBe(200);
      expect(me.json().data.user).toMatchObject({ id, email, name: 'Pat Person' });
      expect(await memberIn(fabrikam.owner.token, id)).toMatchObject({ name: 'Pat Person', email });
      expect(await memberIn(contoso.owner.token, id)).toMatchObject({ name: 'Pat Person', email });

      // Fabrikam's SCIM sees its own view: not Contoso's names, and its own writes stay in Fabrikam.
      const [inFabrikam] = await filterIds(fabrikam, `userName eq "${email}"`);
      expect(inFabrikam).toBe(id);
      expect(await scimGet(fabrikam, id)).toMatchObject({
        displayName: 'Pat Person',
        name: { formatted: 'Pat Person' },
        emails: [{ value: email, type: 'work', primary: true }],
      });
      expect((await scimGet(fabrikam, id)).name).not.toHaveProperty('givenName');
      const own = await fabrikam.client.patch(
        `/Users/${id}`,
        patchOp({ op: 'replace', value: { displayName: 'Pat (Fabrikam)' } }),
      );
      expect(own.json().displayName).toBe('Pat (Fabrikam)');
      expect((await scimGet(contoso, id)).displayName).toBe('Pat (Contoso)');
      expect((await ctx.get('/api/v1/auth/me', { token: person })).json().data.user.name).toBe('Pat Person');

      // Neither IdP may move the shared sign-in address.
      for (const org of [contoso, fabrikam]) {
        expectScimError(
          await org.client.patch(
            `/Users/${id}`,
            patchOp({ op: 'Replace', path: 'userName', value: address('hijack') }),
          ),
          400,
          'invalidValue',
        );
        expectScimError(
          await org.client.put(`/Users/${id}`, scimUser(address('hijack'))),
          400,
          'invalidValue',
        );
      }
      expect(await scimGet(contoso, id)).toMatchObject({ userName: email, displayName: 'Pat (Contoso)' });
      expect((await login(email, CHOSEN_PASSWORD)).statusCode).toBe(200);
    });

    it('the organization’s own unshared account follows its IdP’s displayName; one it did not create does not', async () => {
      const email = address('own');
      const id = await provision(contoso, email, { name: { givenName: 'Owen', familyName: 'Own' } });
      expect(await memberIn(contoso.owner.token, id)).toMatchObject({ name: 'Owen Own' });
      const res = await contoso.client.patch(
        `/Users/${id}`,
        patchOp({ op: 'Replace', path: 'displayName', value: 'Owen Renamed' }),
      );
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().displayName).toBe('Owen Renamed');
      expect(await memberIn(contoso.owner.token, id)).toMatchObject({ name: 'Owen Renamed', email });

      // An account Contoso did not create (added, not provisioned), though only in Contoso: its holder's name.
      const member = await ctx.addMember(contoso.owner.organization.id, 'member');
      const patched = await contoso.client.patch(
        `/Users/${member.userId}`,
        patchOp({ op: 'replace', path: 'displayName', value: 'Renamed By Idp' }),
      );
      expect(patched.statusCode, patched.body).toBe(200);
      expect(patched.json().displayName).toBe('Renamed By Idp');
      expect(await memberIn(contoso.owner.token, member.userId)).toMatchObject({ name: 'member user' });
      expect((await ctx.get('/api/v1/auth/me', { token: member.token })).json().data.user.name).toBe(
        'member user',
      );
      // Nor its sign-in address.
      const moved = address('moved-member');
      expectScimError(
        await contoso.client.patch(
          `/Users/${member.userId}`,
          patchOp({ op: 'replace', path: 'userName', value: moved }),
        ),
        400,
        'invalidValue',
      );
      expectScimError(
        await contoso.client.patch(
          `/Users/${member.userId}`,
          patchOp({ op: 'replace', value: { userName: moved } }),
        ),
        400,
        'invalidValue',
      );
      expectScimError(
        await contoso.client.put(`/Users/${member.userId}`, scimUser(moved)),
        400,
        'invalidValue',
      );
      expect(await scimGet(contoso, member.userId)).toMatchObject({ userName: member.email });
      expect((await login(member.email)).statusCode).toBe(200);
      expectErrorEnvelope(await login(moved), 401, 'INVALID_CREDENTIALS');
    });

    it('a userName change of the own unshared account leaves the new address unproven: an invitation to it claims the account', async () => {
      const email = address('mover');
      const id = await provision(contoso, email, { displayName: 'Mo Ver' });
      // A proven address on an account still Contoso's own (set in place: an HTTP proof of an unproven account, a
      // password reset for one, may also end the IdP's ownership), with a password its holder signs in with.
      await ctx.db.db
        .update(users)
        .set({
          passwordHash: await hashPassword(CHOSEN_PASSWORD),
          emailVerifiedAt: ctx.clock.now(),
          emailVerifiedVia: 'magic_link',
        })
        .where(eq(users.id, id));
      const proven = await invite(fabrikam.owner.token, email);
      expectErrorEnvelope(
        await accept(proven.token, { name: 'Anyone', password: 'Attacker-Pass-99' }),
        401,
        'INVALID_CREDENTIALS',
      );
      expectErrorEnvelope(await accept(proven.token), 401, 'UNAUTHORIZED');
      expect((await ctx.delete(`${INVITES}/${proven.id}`, { token: fabrikam.owner.token })).statusCode).toBe(
        200,
      );
      const holder = (await login(email, CHOSEN_PASSWORD)).json().data.token as string;

      const newAddress = address('Moved');
      const moved = await contoso.client.patch(
        `/Users/${id}`,
        patchOp({ op: 'Replace', path: 'userName', value: newAddress }),
      );
      expect(moved.statusCode, moved.body).toBe(200);
      expect(moved.json()).toMatchObject({
        userName: newAddress.toLowerCase(),
        emails: [{ value: newAddress.toLowerCase(), type: 'work', primary: true }],
      });
      expect(await memberIn(contoso.owner.token, id)).toMatchObject({ email: newAddress.toLowerCase() });
      expectErrorEnvelope(await login(email, CHOSEN_PASSWORD), 401, 'INVALID_CREDENTIALS');
      expect((await login(newAddress, CHOSEN_PASSWORD)).statusCode).toBe(200);

      // The new address was only the IdP's word: its password alone does not join, the mailbox claims the account.
      const claim = await invite(fabrikam.owner.token, newAddress.toLowerCase());
      expectErrorEnvelope(await accept(claim.token, { password: CHOSEN_PASSWORD }), 400, 'VALIDATION_ERROR');
      expectErrorEnvelope(await accept(claim.token), 400, 'VALIDATION_ERROR');
      const claimed = await accept(claim.token, { name: 'Mailbox Holder', password: 'Mailbox-Pass-777' });
      expect(claimed.statusCode, claimed.body).toBe(200);
      expect(claimed.json().data.user).toMatchObject({ id, name: 'Mailbox Holder' });
      expectErrorEnvelope(await ctx.get('/api/v1/auth/me', { token: holder }), 401, 'SESSION_REVOKED');
      expectErrorEnvelope(await login(newAddress, CHOSEN_PASSWORD), 401, 'INVALID_CREDENTIALS');
      expect((await login(newAddress, 'Mailbox-Pass-777')).statusCode).toBe(200);

      // Now shared (and no longer Contoso's own): the userName stays.
      expectScimError(
        await contoso.client.patch(
          `/Users/${id}`,
          patchOp({ op: 'Replace', path: 'userName', value: address('again') }),
        ),
        400,
        'invalidValue',
      );
      expect((await scimGet(contoso, id)).userName).toBe(newAddress.toLowerCase());
    });
  });
});
