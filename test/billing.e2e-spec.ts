import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Registered, TestContext } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';

describe('billing seams', () => {
  let ctx: TestContext;
  let owner: Registered;
  let admin: { token: string };
  let member: { token: string };
  let viewer: { token: string };

  beforeAll(async () => {
    ctx = await TestContext.create();
    owner = await ctx.register({ organizationName: 'Billing' });
    admin = await ctx.addMember(owner.organization.id, 'admin');
    member = await ctx.addMember(owner.organization.id, 'member');
    viewer = await ctx.addMember(owner.organization.id, 'viewer');
  });
  afterAll(async () => ctx?.close());

  it('tells any role the plan and its features, as the plan changes', async () => {
    const sandbox = await ctx.get('/api/v1/billing/plan', { token: viewer.token });
    expect(sandbox.statusCode).toBe(200);
    expect(sandbox.json().data).toEqual({ plan: 'sandbox', features: [] });
    await ctx.setPlan(owner.organization.id, 'enterprise');
    const enterprise = await ctx.get('/api/v1/billing/plan', { token: owner.token });
    expect(enterprise.json().data.plan).toBe('enterprise');
    expect(enterprise.json().data.features).toEqual(expect.arrayContaining(['scim', 'cpiFeedbackIngest', 'sso']));
    expectErrorEnvelope(await ctx.get('/api/v1/billing/plan'), 401, 'UNAUTHORIZED');
  });

  it('answers checkout and portal with the placeholder for owners and admins, 403 for others', async () => {
    for (const path of ['/api/v1/billing/checkout', '/api/v1/billing/portal']) {
      for (const token of [owner.token, admin.token]) {
        const res = await ctx.post(path, { token, body: {} });
        expect(res.statusCode, res.body).toBe(200);
        expect(res.json().data).toEqual({ available: false, message: expect.stringContaining('payment provider') });
      }
      for (const token of [member.token, viewer.token]) {
        expectErrorEnvelope(await ctx.post(path, { token, body: {} }), 403, 'FORBIDDEN');
      }
    }
  });
});
