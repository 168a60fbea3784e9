import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Registered, TestContext } from './support/app.js';
import {
  AGENT_COUNT,
  apiKeyFixture,
  KEYS,
  PROBE_READ,
  PROBE_WRITE,
  sha256,
  apiKeyHelpers,
  type CreatedKey,
} from './support/api-keys-suite.js';
import { expectErrorEnvelope } from './support/assertions.js';

const KEY_FORMAT = /^svc_live_[A-Za-z0-9_-]{43}$/;
/** A well-formed id that names nothing (the DTO refuses some lists before any agent is looked up). */
const fakeId = (n: number) => n.toString(16).padStart(24, 'a');

describe('workspace API keys', () => {
  let ctx: TestContext;
  let owner: Registered;
  let other: Registered;
  let ownerAgents: string[] = [];
  const agentId = (n: number) => ownerAgents[n]!;

  beforeAll(async () => {
    ({ ctx, owner, other, ownerAgents } = await apiKeyFixture());
  });
  afterAll(async () => ctx?.close());

  const org = () => owner.organization.id;

  const { createKey, storedRow, listKeys } = apiKeyHelpers(
    () => ctx,
    () => owner,
  );

  describe('POST /auth/keys', () => {
    it('returns the key once with its prefix and scope, and stores only its SHA-256', async () => {
      const res = await ctx.post(KEYS, {
        token: owner.token,
        body: {
          name: '  Deploy bot ',
          scope: { agentIds: [agentId(1), agentId(1), agentId(2)], readOnly: true },
        },
      });
      expect(res.statusCode, res.body).toBe(201);
      expect(res.headers['cache-control']).toBe('no-store');
      const data = res.json().data as CreatedKey;
      expect(data).toEqual({
        id: expect.stringMatching(/^[0-9a-f]{24}$/),
        name: 'Deploy bot',
        key: expect.stringMatching(KEY_FORMAT),
        prefix: data.key.slice(0, 'svc_live_'.length + 12),
        scope: { agentIds: [agentId(1), agentId(2)], readOnly: true },
        createdAt: ctx.clock.now().toISOString(),
      });

      const row = await storedRow(data.id);
      expect(row).toMatchObject({
        organizationId: org(),
        kind: 'workspace',
        agentId: null,
        prefix: data.prefix,
        keyHash: sha256(data.key),
        createdBy: owner.user.id,
        lastUsedAt: null,
        revokedAt: null,
      });
      const stored = JSON.stringify(row);
      expect(stored).not.toContain(data.key);
      expect(stored).not.toContain(data.key.slice(data.prefix.length));
    });

    it('mints a different key on every call', async () => {
      const [a, b] = [await createKey(), await createKey()];
      expect(a.key).not.toBe(b.key);
      expect(a.prefix).not.toBe(b.prefix);
    });

    it('defaults the scope to every agent, writable', async () => {
      const created = await createKey({ name: 'Default scope' });
      expect(created.scope).toEqual({ agentIds: null, readOnly: false });
      expect((await storedRow(created.id)).scope).toEqual({ readOnly: false });
    });

    it.each([
      ['an unknown field', { name: 'x', role: 'owner' }, 'role'],
      ['an unknown scope field', { name: 'x', scope: { readOnly: true, admin: true } }, 'scope.admin'],
      ['a missing name', { scope: { readOnly: true } }, 'name'],
      ['a blank name', { name: '   ' }, 'name'],
      ['a name over 120 characters', { name: 'n'.repeat(121) }, 'name'],
      ['a malformed agent id', { name: 'x', scope: { agentIds: ['not-an-id'] } }, 'scope.agentIds'],
      ['an upper-case agent id', { name: 'x', scope: { agentIds: ['A'.repeat(24)] } }, 'scope.agentIds'],
      ['an empty agent list', { name: 'x', scope: { agentIds: [] } }, 'scope.agentIds'],
      [
        'more than 100 agent ids',
        { name: 'x', scope: { agentIds: Array.from({ length: 101 }, (_, i) => fakeId(i)) } },
        'scope.agentIds',
      ],
      ['a non-boolean readOnly', { name: 'x', scope: { readOnly: 'yes' } }, 'scope.readOnly'],
      ['a null readOnly', { name: 'x', scope: { readOnly: null } }, 'scope.readOnly'],
      ['a scope that is not an object', { name: 'x', scope: 'read-only' }, 'scope'],
    ])('refuses %s with 400 VALIDATION_ERROR and creates nothing', async (_, body, field) => {
      const before = (await listKeys()).json().pagination.total as number;
      const res = await ctx.post(KEYS, { token: owner.token, body });
      const error = expectErrorEnvelope(res, 400, 'VALIDATION_ERROR');
      expect((error.details as { field: string }[]).map((d) => d.field)).toContain(field);
      expect((await listKeys()).json().pagination.total).toBe(before);
    });

    it('accepts exactly 100 agent ids', async () => {
      const ids = Array.from({ length: AGENT_COUNT }, (_, i) => agentId(i));
      const created = await createKey({ name: 'Many agents', scope: { agentIds: ids } });
      expect(created.scope.agentIds).toEqual(ids);
    });
  });

  describe('GET /auth/keys', () => {
    it('lists this organization’s live keys with the prefix only, never the key', async () => {
      const created = await createKey({ name: 'Listed' });
      const theirs = await createKey({ name: 'Theirs' }, other.token);
      const res = await listKeys();
      const body = res.json();
      expect(body.pagination).toMatchObject({ page: 1, limit: 100, total: body.data.length });
      const entry = body.data.find((k: { id: string }) => k.id === created.id);
      expect(entry).toEqual({
        id: created.id,
        name: 'Listed',
        prefix: created.prefix,
        scope: { agentIds: null, readOnly: false },
        createdAt: created.createdAt,
        lastUsedAt: null,
      });
      expect(res.body).not.toContain(created.key);
      expect(res.body).not.toContain(sha256(created.key));
      expect(res.body).not.toMatch(/keyHash|key_hash/);
      expect(body.data.map((k: { id: string }) => k.id)).not.toContain(theirs.id);
      expect((await listKeys(other.token)).json().data.map((k: { id: string }) => k.id)).toEqual([theirs.id]);
    });

    it('pages with page and limit, and refuses a non-numeric limit with 400', async () => {
      const total = (await listKeys()).json().pagination.total as number;
      const res = await ctx.get(KEYS, { token: owner.token, query: { page: '2', limit: '2' } });
      expect(res.statusCode).toBe(200);
      expect(res.json().pagination).toEqual({ page: 2, limit: 2, total, totalPages: Math.ceil(total / 2) });
      expect(res.json().data).toHaveLength(2);
      expectErrorEnvelope(
        await ctx.get(KEYS, { token: owner.token, query: { limit: 'many' } }),
        400,
        'VALIDATION_ERROR',
      );
    });
  });

  describe('PATCH /auth/keys/:id', () => {
    it('renames and merges the scope: only the fields sent change, agentIds null lifts the restriction', async () => {
      const created = await createKey({ name: 'Before', scope: { agentIds: [agentId(4)], readOnly: true } });
      const url = `${KEYS}/${created.id}`;

      const renamed = await ctx.patch(url, { token: owner.token, body: { name: ' After ' } });
      expect(renamed.statusCode, renamed.body).toBe(200);
      expect(renamed.json().data).toEqual({
        id: created.id,
        name: 'After',
        prefix: created.prefix,
        scope: { agentIds: [agentId(4)], readOnly: true },
        createdAt: created.createdAt,
        lastUsedAt: null,
      });
      expect(renamed.body).not.toContain(created.key);

      const agents = await ctx.patch(url, {
        token: owner.token,
        body: { scope: { agentIds: [agentId(5), agentId(6)] } },
      });
      expect(agents.json().data.scope).toEqual({ agentIds: [agentId(5), agentId(6)], readOnly: true });

      const lifted = await ctx.patch(url, { token: owner.token, body: { scope: { agentIds: null } } });
      expect(lifted.json().data.scope).toEqual({ agentIds: null, readOnly: true });
      expect((await storedRow(created.id)).scope).toEqual({ readOnly: true });

      const probe = await ctx.get(PROBE_READ, { apiKey: created.key });
      expect(probe.json().data.scope).toEqual({ readOnly: true });
    });

    it('refuses unknown fields and invalid values with 400 VALIDATION_ERROR', async () => {
      const created = await createKey({ name: 'Strict' });
      const url = `${KEYS}/${created.id}`;
      for (const body of [
        { prefix: 'svc_live_mine' },
        { scope: { readOnly: true, extra: 1 } },
        { name: '' },
        { name: null },
        { scope: null },
        { scope: { agentIds: ['zz'] } },
      ]) {
        expectErrorEnvelope(await ctx.patch(url, { token: owner.token, body }), 400, 'VALIDATION_ERROR');
      }
      expect((await storedRow(created.id)).name).toBe('Strict');
    });

    it('answers 404 for another organization’s key, an unknown id and a malformed id, changing nothing', async () => {
      const theirs = await createKey({ name: 'Theirs' }, other.token);
      for (const id of [theirs.id, fakeId(999), 'not-an-id']) {
        expectErrorEnvelope(
          await ctx.patch(`${KEYS}/${id}`, { token: owner.token, body: { scope: { readOnly: true } } }),
          404,
          'NOT_FOUND',
        );
      }
      expect(await storedRow(theirs.id)).toMatchObject({ name: 'Theirs', scope: { readOnly: false } });
    });
  });

  describe('DELETE /auth/keys/:id', () => {
    it('revokes the key: {id, deleted: true}, then 401 at once, gone from the list, 404 the second time', async () => {
      const created = await createKey({ name: 'Short-lived' });
      expect((await ctx.get(PROBE_READ, { apiKey: created.key })).statusCode).toBe(200);

      const res = await ctx.request('DELETE', `${KEYS}/${created.id}`, { token: owner.token });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual({ success: true, data: { id: created.id, deleted: true } });

      expectErrorEnvelope(await ctx.get(PROBE_READ, { apiKey: created.key }), 401, 'UNAUTHORIZED');
      expectErrorEnvelope(await ctx.post(PROBE_WRITE, { apiKey: created.key }), 401, 'UNAUTHORIZED');
      expect((await listKeys()).json().data.map((k: { id: string }) => k.id)).not.toContain(created.id);
      expect((await storedRow(created.id)).revokedAt?.toISOString()).toBe(ctx.clock.now().toISOString());

      expectErrorEnvelope(
        await ctx.request('DELETE', `${KEYS}/${created.id}`, { token: owner.token }),
        404,
        'NOT_FOUND',
      );
      expectErrorEnvelope(
        await ctx.patch(`${KEYS}/${created.id}`, { token: owner.token, body: { name: 'Revived' } }),
        404,
        'NOT_FOUND',
      );
    });

    it('answers 404 for another organization’s key and leaves that key working', async () => {
      const theirs = await createKey({ name: 'Still theirs' }, other.token);
      expectErrorEnvelope(
        await ctx.request('DELETE', `${KEYS}/${theirs.id}`, { token: owner.token }),
        404,
        'NOT_FOUND',
      );
      const probe = await ctx.get(PROBE_READ, { apiKey: theirs.key });
      expect(probe.statusCode).toBe(200);
      expect(probe.json().data.organizationId).toBe(other.organization.id);
    });
  });
});
