import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Registered, TestContext } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';
import { auditEntriesOf } from './support/compliance-suite.js';
import { rawRequest } from './support/raw-http.js';
import {
  expectScimError,
  patchOp,
  SCIM,
  scimClient,
  scimOrganization,
  scimUser,
  USER_SCHEMA,
} from './support/scim.js';

const TOKEN_API = '/api/v1/sso/scim-token';
const LIST = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
type Client = ReturnType<typeof scimClient>;

describe('SCIM 2.0', () => {
  let ctx: TestContext;
  let owner: Registered;
  let client: Client;

  /** Provisions a user and answers its SCIM id. */
  async function provision(userName: string, extra: Record<string, unknown> = {}): Promise<string> {
    const res = await client.post('/Users', scimUser(userName, extra));
    expect(res.statusCode, res.body).toBe(201);
    return res.json().id;
  }
  const filter = async (expression: string): Promise<string[]> => {
    const res = await client.get(`/Users?count=200&filter=${encodeURIComponent(expression)}`);
    expect(res.statusCode, res.body).toBe(200);
    return (res.json().Resources as { userName: string }[]).map((r) => r.userName).sort();
  };

  beforeAll(async () => {
    ctx = await TestContext.create();
    ({ owner, client } = await scimOrganization(ctx));
  });
  // The limiters count on the test clock: each test starts with fresh windows.
  beforeEach(() => ctx.clock.advance(15 * 60_000 + 1));
  afterAll(async () => {
    await ctx?.close();
  });

  describe('the token', () => {
    it('is shown once, kept as a hash, replaced at once by a new one, and revoked', async () => {
      const org = await ctx.register({ organizationName: 'Token org' });
      await ctx.setPlan(org.organization.id, 'enterprise');
      const status = async () => (await ctx.get(TOKEN_API, { token: org.token })).json().data;
      expect(await status()).toEqual({ exists: false, createdAt: null, lastUsedAt: null });

      const first = await ctx.post(TOKEN_API, { token: org.token });
      expect(first.statusCode, first.body).toBe(200);
      expect(first.json().data).toEqual({
        token: expect.stringMatching(/^scim_[0-9a-f]{48}$/),
        createdAt: expect.any(String),
      });
      const firstToken = first.json().data.token as string;
      const firstClient = scimClient(ctx, () => firstToken);
      expect((await firstClient.get('/Users')).statusCode).toBe(200);
      expect(await status()).toEqual({
        exists: true,
        createdAt: expect.any(String),
        lastUsedAt: expect.any(String),
      });
      expect(JSON.stringify(await status())).not.toContain(firstToken);

      const second = (await ctx.post(TOKEN_API, { token: org.token })).json().data.token as string;
      expect(second).not.toBe(firstToken);
      expectScimError(await firstClient.get('/Users'), 401);
      expect((await scimClient(ctx, () => second).get('/Users')).statusCode).toBe(200);

      const revoked = await ctx.delete(TOKEN_API, { token: org.token });
      expect(revoked.json().data).toEqual({ deleted: true });
      expectScimError(await scimClient(ctx, () => second).get('/Users'), 401);
      expect((await ctx.delete(TOKEN_API, { token: org.token })).json().data).toEqual({ deleted: false });
      const [created] = await auditEntriesOf(ctx, org.organization.id, 'scim.token.created');
      expect(JSON.stringify(created)).not.toContain(firstToken);
      expect((await auditEntriesOf(ctx, org.organization.id, 'scim.token.revoked')).length).toBe(1);
    });

    it('is for owners and admins on a plan with scim; a downgraded plan stops the token', async () => {
      const member = await ctx.addMember(owner.organization.id, 'member');
      expectErrorEnvelope(await ctx.post(TOKEN_API, { token: member.token }), 403, 'FORBIDDEN');
      const admin = await ctx.addMember(owner.organization.id, 'admin');
      expect((await ctx.get(TOKEN_API, { token: admin.token })).statusCode).toBe(200);
      const team = await ctx.register({ organizationName: 'Governance plan' });
      await ctx.setPlan(team.organization.id, 'governance');
      expectErrorEnvelope(await ctx.post(TOKEN_API, { token: team.token }), 403, 'UPGRADE_REQUIRED');

      const downgraded = await scimOrganization(ctx, 'Downgraded');
      await ctx.setPlan(downgraded.owner.organization.id, 'governance');
      expectScimError(await downgraded.client.get('/Users'), 403);
    });

    it('refuses a missing, malformed or unknown bearer with a SCIM 401', async () => {
      for (const authorization of [
        undefined,
        'Basic abc',
        'Bearer ',
        `Bearer scim_${'0'.repeat(48)}`,
        `Bearer ${owner.token}`,
      ]) {
        const res = await ctx.request('GET', `${SCIM}/Users`, {
          headers: authorization ? { authorization } : {},
        });
        expectScimError(res, 401);
        expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
      }
    });
  });

  describe('discovery (public)', () => {
    it('answers the ServiceProviderConfig, the resource types and the schemas, by list and by id', async () => {
      const spc = await ctx.get(`${SCIM}/ServiceProviderConfig`);
      expect(spc.statusCode).toBe(200);
      expect(spc.headers['content-type']).toMatch(/^application\/scim\+json/);
      expect(spc.json()).toMatchObject({
        patch: { supported: true },
        bulk: { supported: false },
        filter: { supported: true, maxResults: 200 },
        sort: { supported: false },
        etag: { supported: false },
        authenticationSchemes: [expect.objectContaining({ type: 'oauthbearertoken' })],
      });
      const types = (await ctx.get(`${SCIM}/ResourceTypes`)).json();
      expect(types).toMatchObject({ schemas: [LIST], totalResults: 2 });
      expect(types.Resources.map((r: { id: string }) => r.id)).toEqual(['User', 'Group']);
      expect((await ctx.get(`${SCIM}/ResourceTypes/User`)).json()).toMatchObject({
        endpoint: '/Users',
        schema: USER_SCHEMA,
      });
      expectScimError(await ctx.get(`${SCIM}/ResourceTypes/Device`), 404);
      const schemas = (await ctx.get(`${SCIM}/Schemas`)).json();
      expect(schemas.totalResults).toBe(2);
      const user = (await ctx.get(`${SCIM}/Schemas/${USER_SCHEMA}`)).json();
      const userName = user.attributes.find((a: { name: string }) => a.name === 'userName');
      expect(userName).toMatchObject({
        type: 'string',
        required: true,
        caseExact: false,
        uniqueness: 'server',
        mutability: 'readWrite',
      });
      expect(user.attributes.map((a: { name: string }) => a.name)).toEqual(
        expect.arrayContaining(['userName', 'name', 'displayName', 'active', 'emails', 'groups']),
      );
      expectScimError(await ctx.get(`${SCIM}/Schemas/urn:nothing`), 404);
    });
  });

  describe('Users', () => {
    it('provisions atomically with meta, a Location and the role from the groups, audited with the token id', async () => {
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
        expect(page).toMatchObject({ schemas: [LIST], totalResults: 205, startIndex: start });
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

    it('filters with every operator, and, or, not and parentheses, with RFC precedence', async () => {
      const f = await scimOrganization(ctx, 'Filters');
      const mk = async (userName: string, extra: Record<string, unknown>) => {
        const res = await f.client.post('/Users', scimUser(userName, extra));
        expect(res.statusCode, res.body).toBe(201);
        return res.json().id as string;
      };
      await mk('alice@f.example', { externalId: 'A-1', name: { givenName: 'Alice', familyName: 'Smith' } });
      await mk('bob@f.example', { externalId: 'B-2', name: { givenName: 'Bob', familyName: 'Jones' } });
      const carol = await mk('carol@g.example', { name: { givenName: 'Carol', familyName: 'Smithers' } });
      await f.client.patch(`/Users/${carol}`, patchOp({ op: 'replace', path: 'active', value: false }));
      const q = async (expression: string) => {
        const res = await f.client.get(`/Users?filter=${encodeURIComponent(expression)}`);
        expect(res.statusCode, `${expression}: ${res.body}`).toBe(200);
        return (res.json().Resources as { userName: string }[])
          .map((r) => r.userName)
          .filter((u) => !u.includes('user-'))
          .sort();
      };
      expect(await q('userName eq "ALICE@f.example"')).toEqual(['alice@f.example']);
      expect(await q('userName ne "alice@f.example" and userName ew "example" and active eq true')).toEqual([
        'bob@f.example',
      ]);
      expect(await q('name.familyName co "mith"')).toEqual(['alice@f.example', 'carol@g.example']);
      expect(await q('userName sw "b"')).toEqual(['bob@f.example']);
      expect(await q('emails.value ew "@g.example"')).toEqual(['carol@g.example']);
      expect(await q('externalId pr')).toEqual(['alice@f.example', 'bob@f.example']);
      expect(await q('externalId eq "a-1"')).toEqual([]); // externalId is case-exact
      expect(await q('userName gt "bob@f.example" and userName lt "d"')).toEqual(['carol@g.example']);
      expect(await q('userName ge "bob@f.example" and userName le "bob@f.example"')).toEqual([
        'bob@f.example',
      ]);
      expect(await q('active eq false')).toEqual(['carol@g.example']);
      expect(await q('meta.created ge "2000-01-01T00:00:00Z" and name.givenName eq "bob"')).toEqual([
        'bob@f.example',
      ]);
      expect(await q('meta.lastModified lt "2000-01-01T00:00:00Z"')).toEqual([]);
      // and binds tighter than or; not and parentheses.
      expect(await q('name.givenName eq "Carol" or name.givenName eq "Alice" and active eq false')).toEqual([
        'carol@g.example',
      ]);
      expect(await q('(name.givenName eq "Carol" or name.givenName eq "Alice") and active eq true')).toEqual([
        'alice@f.example',
      ]);
      expect(await q('not (name.familyName co "mith") and externalId pr')).toEqual(['bob@f.example']);
      expect(await q('USERNAME EQ "bob@f.example"')).toEqual(['bob@f.example']);
      expect(await q('urn:ietf:params:scim:schemas:core:2.0:User:userName eq "bob@f.example"')).toEqual([
        'bob@f.example',
      ]);
      expect(await q('emails[value eq "alice@f.example"]')).toEqual(['alice@f.example']);
      for (const bad of [
        'userName eq',
        'userName zz "a"',
        'nickName eq "x"',
        'userName eq "a" and',
        '(userName eq "a"',
        'userName eq "unterminated',
        'active co true',
        'meta.created gt "yesterday"',
        'userName eq "a") or (',
        'x'.repeat(5000),
      ]) {
        expectScimError(await f.client.get(`/Users?filter=${encodeURIComponent(bad)}`), 400, 'invalidFilter');
      }
    });

    it('replaces a whole user with PUT: what is left out is cleared', async () => {
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

  describe('Groups', () => {
    it('lists the four buckets, moves members between them, and refuses what would change the buckets themselves', async () => {
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

  describe('transport', () => {
    it('answers SCIM errors for what is refused before routing: repeated credentials or parameters, bad URLs, huge heads', async () => {
      const { token } = await scimOrganization(ctx, 'Transport');
      const twice = await ctx.app.inject({
        method: 'GET',
        url: `${SCIM}/Users`,
        headers: { authorization: [`Bearer ${token}`, `Bearer ${token}`] as unknown as string },
      });
      expectScimError(twice, 400, 'invalidSyntax');
      const c = scimClient(ctx, () => token);
      expectScimError(await c.get('/Users?filter=userName%20pr&filter=active%20pr'), 400, 'invalidValue');
      expectScimError(await c.get('/Users?count=1&count=2'), 400, 'invalidValue');
      expectScimError(await c.get('/Users/%zz'), 400, 'invalidSyntax');
      expectScimError(await c.get(`/Users/${'x'.repeat(5000)}`), 414);
      await ctx.app.listen({ port: 0, host: '127.0.0.1' });
      const port = (ctx.app.getHttpServer().address() as AddressInfo).port;
      const big = await rawRequest(port, {
        method: 'GET',
        path: `${SCIM}/ResourceTypes`,
        headers: [['X-Padding', 'p'.repeat(17 * 1024)]],
      });
      expect(big.status).toBe(431);
      expect(big.headers['content-type']).toMatch(/^application\/scim\+json/);
      expect(JSON.parse(big.body)).toMatchObject({
        status: '431',
        schemas: [expect.stringContaining(':Error')],
      });
      const long = await rawRequest(port, { method: 'GET', path: `${SCIM}/Users?x=${'q'.repeat(20_000)}` });
      expect(long.status).toBe(414);
      expect(JSON.parse(long.body)).toMatchObject({ status: '414' });
      // The versioned API keeps its envelope.
      const api = await rawRequest(port, {
        method: 'GET',
        path: '/api/v1/health',
        headers: [['X-Padding', 'p'.repeat(17 * 1024)]],
      });
      expect(JSON.parse(api.body)).toMatchObject({ success: false, code: 'HEADERS_TOO_LARGE' });
    });
  });

  describe('limits', () => {
    // 600 per 15 minutes is the default (libs/platform/src/config/app-config.spec.ts); a smaller window here shows
    // the mechanism with fewer requests: per token and per IP address, both applied, with Retry-After.
    const MAX = 40;
    let limited: TestContext;
    beforeAll(async () => {
      limited = await TestContext.create({
        config: { scimRateLimit: { max: MAX, windowMs: 15 * 60_000 } },
      });
    });
    afterAll(async () => {
      await limited?.close();
    });

    it('counts per token and per IP address, both applied, with Retry-After', async () => {
      const a = await scimOrganization(limited, 'Limit A');
      const b = await scimOrganization(limited, 'Limit B');
      const inject = (t: string, ip: string) =>
        limited.app.inject({
          method: 'GET',
          url: `${SCIM}/Users?count=0`,
          remoteAddress: ip,
          headers: { authorization: `Bearer ${t}` },
        });
      limited.clock.advance(15 * 60_000 + 1);
      // One token from many addresses: the token's window ends it.
      for (let i = 0; i < MAX; i++) expect((await inject(a.token, `10.0.0.${i + 1}`)).statusCode).toBe(200);
      const byToken = await inject(a.token, '10.9.9.9');
      expectScimError(byToken, 429);
      expect(Number(byToken.headers['retry-after'])).toBeGreaterThan(0);
      expect((await inject(b.token, '10.9.9.9')).statusCode).toBe(200);
      // One address with two tokens: the address's window ends it, and another address goes on.
      limited.clock.advance(15 * 60_000 + 1);
      for (let i = 0; i < MAX / 2; i++) expect((await inject(a.token, '10.1.1.1')).statusCode).toBe(200);
      for (let i = 0; i < MAX / 2; i++) expect((await inject(b.token, '10.1.1.1')).statusCode).toBe(200);
      expectScimError(await inject(b.token, '10.1.1.1'), 429);
      expect((await inject(b.token, '10.1.1.2')).statusCode).toBe(200);
      // Guessing tokens counts against the address too.
      limited.clock.advance(15 * 60_000 + 1);
      for (let i = 0; i < MAX; i++)
        expect((await inject(`scim_${'1'.repeat(48)}`, '10.2.2.2')).statusCode).toBe(401);
      expectScimError(await inject(a.token, '10.2.2.2'), 429);
      // A new window lets them through again.
      limited.clock.advance(15 * 60_000 + 1);
      expect((await inject(a.token, '10.2.2.2')).statusCode).toBe(200);
    });
  });
});
