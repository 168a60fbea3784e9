import { GovernanceError, type Schemas } from '@governance/client';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { uniqueEmail } from '../support/app.js';
import { ListeningService, signUp, type SignedUp } from './harness.js';

const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

describe('client: SCIM provisioning with the SCIM token', () => {
  let service: ListeningService;
  let owner: SignedUp;

  beforeAll(async () => {
    service = await ListeningService.start();
    owner = await signUp(service, 'Provisioned');
    // Plans change through the operator CLI only.
    await service.ctx.setPlan(owner.organizationId, 'enterprise');
  });
  afterAll(async () => service?.close());

  it('mints the token, then creates, lists, finds, deactivates and reads a user with it', async () => {
    const { token } = await owner.client.post('/api/v1/sso/scim-token');
    expect(token).toMatch(/^scim_[0-9a-f]{48}$/);
    expect(await owner.client.get('/api/v1/sso/scim-token')).toMatchObject({ exists: true });
    const scim = service.client({ credentials: { scimToken: token } });

    const userName = uniqueEmail('scim');
    const created = await scim.post('/scim/v2/Users', {
      body: {
        schemas: [USER],
        userName,
        externalId: 'entra-0001',
        name: { givenName: 'Ada', familyName: 'Lovelace' },
        active: true,
      },
    });
    expectTypeOf(created).toEqualTypeOf<Schemas['ScimUser']>();
    expect(created).toMatchObject({
      userName,
      externalId: 'entra-0001',
      active: true,
      displayName: 'Ada Lovelace',
    });

    const list = await scim.get('/scim/v2/Users', {
      params: { query: { filter: `userName eq "${userName}"` } },
    });
    expect(list.totalResults).toBe(1);
    expect(list.Resources[0]!.id).toBe(created.id);

    const all = await scim.get('/scim/v2/Users', { params: { query: { count: '200' } } });
    expect(all.Resources.map((u) => u.userName)).toEqual(expect.arrayContaining([owner.email, userName]));

    const patched = await scim.patch('/scim/v2/Users/{id}', {
      params: { path: { id: created.id } },
      body: { schemas: [PATCH], Operations: [{ op: 'replace', path: 'active', value: false }] },
    });
    expect(patched.active).toBe(false);
    const read = await scim.get('/scim/v2/Users/{id}', { params: { path: { id: created.id } } });
    expect(read).toMatchObject({ id: created.id, active: false });

    // The member list the owner sees agrees.
    const members = [];
    for await (const member of owner.client.paginate('/api/v1/team/members')) members.push(member);
    expect(members.find((m) => m.email === userName)).toMatchObject({ isActive: false, role: 'member' });
  });

  it('answers SCIM errors as GovernanceError with the scimType and the generic code of the status', async () => {
    const { token } = await owner.client.post('/api/v1/sso/scim-token');
    const scim = service.client({ credentials: { scimToken: token } });
    const taken = await scim
      .post('/scim/v2/Users', { body: { schemas: [USER], userName: owner.email } })
      .catch((e: unknown) => e);
    expect(taken).toBeInstanceOf(GovernanceError);
    expect(taken).toMatchObject({ status: 409, code: 'CONFLICT', scimType: 'uniqueness' });

    const filter = await scim
      .get('/scim/v2/Users', { params: { query: { filter: 'userName eq' } } })
      .catch((e: unknown) => e);
    expect(filter).toMatchObject({ status: 400, scimType: 'invalidFilter' });

    const missing = await scim
      .get('/scim/v2/Users/{id}', { params: { path: { id: 'f'.repeat(24) } } })
      .catch((e: unknown) => e);
    expect(missing).toMatchObject({ status: 404, code: 'NOT_FOUND' });

    // The token minted before is revoked by the new one.
    const stale = service.client({ credentials: { scimToken: 'scim_' + '0'.repeat(48) } });
    await expect(stale.get('/scim/v2/Users')).rejects.toMatchObject({ status: 401, code: 'UNAUTHORIZED' });
  });
});
