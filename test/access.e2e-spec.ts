import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Registered, TestContext } from './support/app.js';
import { TestKeysModule } from './support/test-keys.module.js';

describe('access guard: credentials, key kinds and read-only keys', () => {
  let ctx: TestContext;
  let owner: Registered;
  beforeAll(async () => {
    ctx = await TestContext.create({ imports: [TestKeysModule] });
    owner = await ctx.register();
  });
  afterAll(async () => ctx?.close());

  const org = () => owner.organization.id;

  it('accepts a workspace key on a route that declares workspace keys, with the key’s organization', async () => {
    const res = await ctx.get('/api/v1/test-keys/read', { apiKey: `svc_test_rw_${org()}` });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual({ credential: 'workspaceKey', organizationId: org() });
  });

  it('accepts a JWT on the same route', async () => {
    const res = await ctx.get('/api/v1/test-keys/read', { token: owner.token });
    expect(res.json().data.credential).toBe('jwt');
  });

  it('refuses a read-only key on a write with 403 FORBIDDEN, and lets it read', async () => {
    const write = await ctx.post('/api/v1/test-keys/write', { apiKey: `svc_test_ro_${org()}` });
    expect(write.statusCode).toBe(403);
    expect(write.json()).toEqual({ success: false, error: 'This API key is read-only', code: 'FORBIDDEN' });
    expect((await ctx.get('/api/v1/test-keys/read', { apiKey: `svc_test_ro_${org()}` })).statusCode).toBe(
      200,
    );
    expect((await ctx.post('/api/v1/test-keys/write', { apiKey: `svc_test_rw_${org()}` })).statusCode).toBe(
      201,
    );
  });

  it('refuses a key kind the route does not accept with 403, and a JWT on a key-only route with 403', async () => {
    const agentOnRead = await ctx.get('/api/v1/test-keys/read', { apiKey: `svc_test_agent_${org()}` });
    expect(agentOnRead.statusCode).toBe(403);
    expect(agentOnRead.json().code).toBe('FORBIDDEN');
    const jwtOnAgent = await ctx.post('/api/v1/test-keys/agent-only', { token: owner.token });
    expect(jwtOnAgent.statusCode).toBe(403);
    const agent = await ctx.post('/api/v1/test-keys/agent-only', { apiKey: `svc_test_agent_${org()}` });
    expect(agent.statusCode).toBe(201);
    expect(agent.json().data).toEqual({ credential: 'agentKey', agentId: 'agent-1' });
  });

  it('refuses keys on JWT-only routes with 403 and unknown keys anywhere with 401', async () => {
    const keyOnJwtRoute = await ctx.get('/api/v1/auth/me', { apiKey: `svc_test_rw_${org()}` });
    expect(keyOnJwtRoute.statusCode).toBe(403);
    expect(keyOnJwtRoute.json().code).toBe('FORBIDDEN');
    for (const apiKey of ['svc_test_rw_nothex', 'svc_live_unknown', 'garbage']) {
      const res = await ctx.get('/api/v1/test-keys/read', { apiKey });
      expect(res.statusCode).toBe(401);
      expect(res.json().code).toBe('UNAUTHORIZED');
    }
  });

  it('refuses a role below the route’s roles: a viewer may read but not write', async () => {
    const viewer = await ctx.addMember(org(), 'viewer');
    expect((await ctx.get('/api/v1/test-keys/read', { token: viewer.token })).statusCode).toBe(200);
    const res = await ctx.post('/api/v1/test-keys/write', { token: viewer.token });
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBe('FORBIDDEN');
  });
});
