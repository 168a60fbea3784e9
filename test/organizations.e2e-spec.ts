import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildProgram } from '../apps/cli/src/cli.js';
import { TestContext } from './support/app.js';
import { FeatureProbeModule } from './support/feature-probe.module.js';

describe('organizations, roles and plans', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await TestContext.create({ imports: [FeatureProbeModule] });
  });
  afterAll(async () => ctx?.close());

  it('GET /organizations/current returns id, name, plan, features, retention, contest contact and createdAt for every role', async () => {
    const owner = await ctx.register({ organizationName: 'Current Org' });
    const viewer = await ctx.addMember(owner.organization.id, 'viewer');
    for (const token of [owner.token, viewer.token]) {
      const res = await ctx.get('/api/v1/organizations/current', { token });
      expect(res.statusCode).toBe(200);
      expect(res.json().data).toEqual({
        id: owner.organization.id,
        name: 'Current Org',
        plan: 'sandbox',
        features: [],
        traceRetentionDays: null,
        contestContact: null,
        piiMasking: null,
        createdAt: expect.any(String),
      });
    }
  });

  it('gives organizations ids that do not lead to one another (no process bytes or counter to walk)', async () => {
    const ids = [];
    for (let i = 0; i < 5; i += 1)
      ids.push((await ctx.register({ organizationName: `Walk ${i}` })).organization.id);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{24}$/);
    // An object id of newId would share its 5 process bytes and count up by one from a neighbour.
    expect(new Set(ids.map((id) => id.slice(8, 18))).size).toBe(ids.length);
    const counters = ids.map((id) => Number.parseInt(id.slice(18), 16));
    expect(counters.slice(1).every((c, i) => c !== counters[i]! + 1)).toBe(true);
  });

  it('lets owners and admins rename the organization and writes organization.updated', async () => {
    const owner = await ctx.register({ organizationName: 'Before' });
    const admin = await ctx.addMember(owner.organization.id, 'admin');
    const res = await ctx.patch('/api/v1/organizations/current', {
      token: admin.token,
      body: { name: 'After' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.name).toBe('After');
    const audit = await ctx.get('/api/v1/audit', {
      token: owner.token,
      query: { eventType: 'organization.updated' },
    });
    expect(audit.json().data).toHaveLength(1);
    expect(audit.json().data[0]).toMatchObject({
      actor: { type: 'user', id: admin.userId, email: admin.email },
      metadata: { changes: { name: { from: 'Before', to: 'After' } } },
    });
  });

  it.each(['member', 'viewer'] as const)(
    'refuses a %s renaming the organization: 403 FORBIDDEN, nothing changed',
    async (role) => {
      const owner = await ctx.register({ organizationName: 'Unchanged' });
      const user = await ctx.addMember(owner.organization.id, role);
      const res = await ctx.patch('/api/v1/organizations/current', {
        token: user.token,
        body: { name: 'Hijacked' },
      });
      expect(res.statusCode).toBe(403);
      expect(res.json().code).toBe('FORBIDDEN');
      const current = await ctx.get('/api/v1/organizations/current', { token: owner.token });
      expect(current.json().data.name).toBe('Unchanged');
    },
  );

  it('refuses an empty name and unknown fields with 400 VALIDATION_ERROR', async () => {
    const owner = await ctx.register();
    for (const body of [{ name: '   ' }, { name: 'Ok', plan: 'custom' }, {}]) {
      const res = await ctx.patch('/api/v1/organizations/current', { token: owner.token, body });
      expect(res.statusCode).toBe(400);
      expect(res.json().code).toBe('VALIDATION_ERROR');
    }
    const current = await ctx.get('/api/v1/organizations/current', { token: owner.token });
    expect(current.json().data.plan).toBe('sandbox');
  });

  it('refuses a feature the plan lacks with 403 UPGRADE_REQUIRED, and allows it after org:set-plan', async () => {
    const owner = await ctx.register();
    const denied = await ctx.get('/api/v1/test-probe/sso', { token: owner.token });
    expect(denied.statusCode).toBe(403);
    expect(denied.json().code).toBe('UPGRADE_REQUIRED');

    const printed: unknown[] = [];
    const program = buildProgram(
      (fn) => fn(ctx.app),
      (value) => printed.push(value),
    );
    await program.parseAsync(['node', 'cli', 'org:set-plan', owner.organization.id, 'governance']);
    expect(printed[0]).toMatchObject({
      id: owner.organization.id,
      plan: 'governance',
      features: expect.arrayContaining(['sso']),
    });

    const allowed = await ctx.get('/api/v1/test-probe/sso', { token: owner.token });
    expect(allowed.statusCode).toBe(200);
    expect(allowed.json().data).toEqual({ ok: true });
    const scim = await ctx.get('/api/v1/test-probe/scim-admin', { token: owner.token });
    expect(scim.json().code).toBe('UPGRADE_REQUIRED');

    const audit = await ctx.get('/api/v1/audit', {
      token: owner.token,
      query: { eventType: 'organization.plan_changed' },
    });
    expect(audit.json().data[0]).toMatchObject({
      actor: { type: 'system' },
      metadata: { from: 'sandbox', to: 'governance' },
    });
  });

  it('checks the role after the plan: a viewer on an enterprise organization is refused with FORBIDDEN', async () => {
    const owner = await ctx.register();
    await ctx.setPlan(owner.organization.id, 'enterprise');
    const viewer = await ctx.addMember(owner.organization.id, 'viewer');
    const res = await ctx.get('/api/v1/test-probe/scim-admin', { token: viewer.token });
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBe('FORBIDDEN');
    expect((await ctx.get('/api/v1/test-probe/scim-admin', { token: owner.token })).statusCode).toBe(200);
  });

  it('org:set-plan refuses an unknown plan and an unknown organization', async () => {
    const owner = await ctx.register();
    const program = () =>
      buildProgram(
        (fn) => fn(ctx.app),
        () => undefined,
      );
    await expect(
      program().parseAsync(['node', 'cli', 'org:set-plan', owner.organization.id, 'platinum']),
    ).rejects.toThrow(/Unknown plan/);
    await expect(
      program().parseAsync(['node', 'cli', 'org:set-plan', 'a'.repeat(24), 'scale']),
    ).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
  });

  it('org:list prints organizations with plan and features', async () => {
    const owner = await ctx.register({ organizationName: 'Listed' });
    const printed: unknown[] = [];
    await buildProgram(
      (fn) => fn(ctx.app),
      (v) => printed.push(v),
    ).parseAsync(['node', 'cli', 'org:list', '--limit', '1000']);
    expect(printed[0]).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ id: owner.organization.id, name: 'Listed', plan: 'sandbox' }),
      ]),
    );
  });

  it('answers 404 for an audit entry of another organization, the same as for a missing one', async () => {
    const a = await ctx.register();
    const b = await ctx.register();
    const entries = await ctx.get('/api/v1/audit', { token: a.token });
    const entryId = entries.json().data[0].id;
    expect((await ctx.get(`/api/v1/audit/${entryId}`, { token: a.token })).statusCode).toBe(200);
    const cross = await ctx.get(`/api/v1/audit/${entryId}`, { token: b.token });
    const missing = await ctx.get(`/api/v1/audit/${'f'.repeat(24)}`, { token: b.token });
    const malformed = await ctx.get('/api/v1/audit/not-an-id', { token: b.token });
    for (const res of [cross, missing, malformed]) {
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ success: false, error: 'Audit entry not found', code: 'NOT_FOUND' });
    }
  });
});
