import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type Registered, TestContext } from './support/app.js';
import {
  apiKeyFixture,
  KEYS,
  PROBE_READ,
  PROBE_WRITE,
  sha256,
  apiKeyHelpers,
} from './support/api-keys-suite.js';
import { expectErrorEnvelope } from './support/assertions.js';

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

  describe('authenticating with a workspace key', () => {
    it('resolves to an actor of the key’s organization, with the creator, key id and scope', async () => {
      const created = await createKey({ name: 'Probe', scope: { agentIds: [agentId(7)] } });
      const res = await ctx.get(PROBE_READ, { apiKey: created.key });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data).toEqual({
        type: 'api_key',
        credential: 'workspaceKey',
        organizationId: org(),
        plan: 'sandbox',
        userId: owner.user.id,
        email: null,
        role: null,
        keyId: created.id,
        scope: { agentIds: [agentId(7)], readOnly: false },
      });
      const write = await ctx.post(PROBE_WRITE, { apiKey: created.key });
      expect(write.statusCode, write.body).toBe(201);
      expect(write.json().data).toEqual({ credential: 'workspaceKey', keyId: created.id });
    });

    it('carries the organization’s current plan', async () => {
      const created = await createKey({ name: 'Plan probe' }, other.token);
      await ctx.setPlan(other.organization.id, 'enterprise');
      const res = await ctx.get(PROBE_READ, { apiKey: created.key });
      expect(res.json().data).toMatchObject({ organizationId: other.organization.id, plan: 'enterprise' });
    });

    it('refuses a read-only key on a write with 403 FORBIDDEN and lets it read', async () => {
      const created = await createKey({ name: 'Reader', scope: { readOnly: true } });
      const write = await ctx.post(PROBE_WRITE, { apiKey: created.key });
      expect(write.statusCode).toBe(403);
      expect(write.json()).toEqual({ success: false, error: 'This API key is read-only', code: 'FORBIDDEN' });
      expect((await ctx.get(PROBE_READ, { apiKey: created.key })).statusCode).toBe(200);
    });

    it('applies a change of scope.readOnly on the very next request, both ways', async () => {
      const created = await createKey({ name: 'Toggle', scope: { agentIds: [agentId(3)] } });
      expect((await ctx.post(PROBE_WRITE, { apiKey: created.key })).statusCode).toBe(201);

      const toReadOnly = await ctx.patch(`${KEYS}/${created.id}`, {
        token: owner.token,
        body: { scope: { readOnly: true } },
      });
      expect(toReadOnly.statusCode, toReadOnly.body).toBe(200);
      expect(toReadOnly.json().data.scope).toEqual({ agentIds: [agentId(3)], readOnly: true });
      expectErrorEnvelope(await ctx.post(PROBE_WRITE, { apiKey: created.key }), 403, 'FORBIDDEN');

      await ctx.patch(`${KEYS}/${created.id}`, { token: owner.token, body: { scope: { readOnly: false } } });
      expect((await ctx.post(PROBE_WRITE, { apiKey: created.key })).statusCode).toBe(201);
    });

    it('refuses a workspace key on JWT-only routes with 403, key management included', async () => {
      const created = await createKey({ name: 'Not a session' });
      expectErrorEnvelope(await ctx.get('/api/v1/auth/me', { apiKey: created.key }), 403, 'FORBIDDEN');
      expectErrorEnvelope(await ctx.get(KEYS, { apiKey: created.key }), 403, 'FORBIDDEN');
      expectErrorEnvelope(
        await ctx.post(KEYS, { apiKey: created.key, body: { name: 'Minted by a key' } }),
        403,
        'FORBIDDEN',
      );
      expectErrorEnvelope(
        await ctx.post('/api/v1/auth/stream-token', { apiKey: created.key }),
        403,
        'FORBIDDEN',
      );
    });

    it('refuses unknown and malformed svc_live_ keys with 401 UNAUTHORIZED', async () => {
      const created = await createKey({ name: 'Real' });
      const tampered = created.key.slice(0, -1) + (created.key.endsWith('A') ? 'B' : 'A');
      for (const apiKey of [tampered, 'svc_live_unknown', `${created.key}x`, created.prefix]) {
        expectErrorEnvelope(await ctx.get(PROBE_READ, { apiKey }), 401, 'UNAUTHORIZED');
      }
    });

    it('records lastUsedAt on use, at most once a minute', async () => {
      const created = await createKey({ name: 'Usage' });
      const lastUsedAt = async () =>
        (await listKeys()).json().data.find((k: { id: string }) => k.id === created.id).lastUsedAt as
          string | null;
      expect(await lastUsedAt()).toBeNull();

      const firstUse = ctx.clock.now().toISOString();
      expect((await ctx.get(PROBE_READ, { apiKey: created.key })).statusCode).toBe(200);
      await vi.waitFor(async () => expect(await lastUsedAt()).toBe(firstUse));
      expect((await storedRow(created.id)).lastUsedAt?.toISOString()).toBe(firstUse);

      ctx.clock.advance(30_000);
      expect((await ctx.get(PROBE_READ, { apiKey: created.key })).statusCode).toBe(200);
      expect(await lastUsedAt()).toBe(firstUse);

      ctx.clock.advance(31_000);
      const laterUse = ctx.clock.now().toISOString();
      expect((await ctx.get(PROBE_READ, { apiKey: created.key })).statusCode).toBe(200);
      await vi.waitFor(async () => expect(await lastUsedAt()).toBe(laterUse));
    });
  });

  describe('roles', () => {
    it('lets an admin manage keys', async () => {
      const admin = await ctx.addMember(org(), 'admin');
      const created = await createKey({ name: 'Admin key' }, admin.token);
      expect((await listKeys(admin.token)).json().data.map((k: { id: string }) => k.id)).toContain(
        created.id,
      );
      const res = await ctx.request('DELETE', `${KEYS}/${created.id}`, { token: admin.token });
      expect(res.statusCode).toBe(200);
    });

    it.each(['member', 'viewer'] as const)(
      'refuses a %s on every key route with 403 FORBIDDEN',
      async (role) => {
        const created = await createKey({ name: `Target for ${role}` });
        const user = await ctx.addMember(org(), role);
        const url = `${KEYS}/${created.id}`;
        expectErrorEnvelope(
          await ctx.post(KEYS, { token: user.token, body: { name: 'Mine' } }),
          403,
          'FORBIDDEN',
        );
        expectErrorEnvelope(await ctx.get(KEYS, { token: user.token }), 403, 'FORBIDDEN');
        expectErrorEnvelope(
          await ctx.patch(url, { token: user.token, body: { name: 'Mine' } }),
          403,
          'FORBIDDEN',
        );
        expectErrorEnvelope(await ctx.request('DELETE', url, { token: user.token }), 403, 'FORBIDDEN');
        expect(await storedRow(created.id)).toMatchObject({ name: `Target for ${role}`, revokedAt: null });
      },
    );

    it('refuses a request without credentials with 401', async () => {
      expectErrorEnvelope(await ctx.get(KEYS), 401, 'UNAUTHORIZED');
      expectErrorEnvelope(await ctx.post(KEYS, { body: { name: 'Anonymous' } }), 401, 'UNAUTHORIZED');
    });
  });

  describe('audit', () => {
    it('writes auth.key_created, auth.key_updated and auth.key_revoked with name, prefix and scope, never the key', async () => {
      const created = await createKey({ name: 'Audited', scope: { readOnly: true } });
      await ctx.patch(`${KEYS}/${created.id}`, {
        token: owner.token,
        body: { name: 'Audited 2', scope: { readOnly: false } },
      });
      await ctx.request('DELETE', `${KEYS}/${created.id}`, { token: owner.token });

      const res = await ctx.get('/api/v1/audit', {
        token: owner.token,
        query: { eventType: 'auth.key_*', limit: '200' },
      });
      expect(res.statusCode).toBe(200);
      const entries = (res.json().data as { targetId: string }[]).filter((e) => e.targetId === created.id);
      const actor = { type: 'user', id: owner.user.id, email: owner.user.email };
      expect(entries.reverse()).toEqual([
        expect.objectContaining({
          eventType: 'auth.key_created',
          actor,
          targetType: 'api_key',
          metadata: { name: 'Audited', prefix: created.prefix, scope: { agentIds: null, readOnly: true } },
        }),
        expect.objectContaining({
          eventType: 'auth.key_updated',
          actor,
          metadata: {
            name: 'Audited 2',
            prefix: created.prefix,
            scope: { agentIds: null, readOnly: false },
            changes: {
              name: { from: 'Audited', to: 'Audited 2' },
              scope: {
                from: { agentIds: null, readOnly: true },
                to: { agentIds: null, readOnly: false },
              },
            },
          },
        }),
        expect.objectContaining({
          eventType: 'auth.key_revoked',
          actor,
          metadata: { name: 'Audited 2', prefix: created.prefix, scope: { agentIds: null, readOnly: false } },
        }),
      ]);

      const exported = await ctx.get('/api/v1/audit/export', { token: owner.token });
      expect(exported.statusCode).toBe(200);
      expect(exported.body).toContain(created.prefix);
      expect(exported.body).not.toContain(created.key.slice(created.prefix.length));
      expect(exported.body).not.toContain(sha256(created.key));
    });

    it('writes no entry for a PATCH that changes nothing', async () => {
      const created = await createKey({ name: 'Same' });
      const res = await ctx.patch(`${KEYS}/${created.id}`, {
        token: owner.token,
        body: { name: 'Same', scope: { readOnly: false } },
      });
      expect(res.statusCode).toBe(200);
      const audit = await ctx.get('/api/v1/audit', {
        token: owner.token,
        query: { eventType: 'auth.key_updated', limit: '200' },
      });
      expect(audit.json().data.map((e: { targetId: string }) => e.targetId)).not.toContain(created.id);
    });
  });

  it('limits a key with scope.agentIds to those agents: 403 FORBIDDEN for any other agent', async () => {
    const [a, b] = [agentId(1), agentId(2)];
    const scoped = await createKey({ name: 'Scoped', scope: { agentIds: [a] } });
    const inScope = await ctx.get(`/api/v1/test-workspace-keys/agents/${a}`, { apiKey: scoped.key });
    expect(inScope.statusCode).toBe(200);
    expect(inScope.json().data).toEqual({ agentId: a, scope: [a] });
    expectErrorEnvelope(
      await ctx.get(`/api/v1/test-workspace-keys/agents/${b}`, { apiKey: scoped.key }),
      403,
      'FORBIDDEN',
    );

    const unscoped = await createKey({ name: 'Unscoped' });
    const any = await ctx.get(`/api/v1/test-workspace-keys/agents/${b}`, { apiKey: unscoped.key });
    expect(any.json().data).toEqual({ agentId: b, scope: null });

    // Widening the scope takes effect on the next request.
    await ctx.patch(`${KEYS}/${scoped.id}`, { token: owner.token, body: { scope: { agentIds: [a, b] } } });
    expect(
      (await ctx.get(`/api/v1/test-workspace-keys/agents/${b}`, { apiKey: scoped.key })).statusCode,
    ).toBe(200);
  });
});
