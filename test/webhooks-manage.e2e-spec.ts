import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { webhooks } from '../libs/governance/src/webhooks/webhook.schema.js';
import { type Registered, TestContext } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';
import type { TestAgent } from './support/builders.js';
import { auditEntriesOf } from './support/audit-entries.js';

const HOOKS = '/api/v1/webhooks';
const KEYS = '/api/v1/auth/keys';

describe('webhooks: management and the SSRF guard', () => {
  let ctx: TestContext;
  let owner: Registered;
  let other: Registered;
  let agent: TestAgent;
  let member: { token: string };
  let viewer: { token: string };
  const publicUrl = 'https://93.184.215.14/hooks';

  beforeAll(async () => {
    ctx = await TestContext.create();
    owner = await ctx.register({ organizationName: 'Hook owners' });
    other = await ctx.register({ organizationName: 'Hook others' });
    agent = await ctx.newAgent(owner.organization.id, 'Hooked');
    member = await ctx.addMember(owner.organization.id, 'member');
    viewer = await ctx.addMember(owner.organization.id, 'viewer');
  });
  afterAll(async () => ctx?.close());

  const create = (
    body: Record<string, unknown>,
    auth: { token?: string; apiKey?: string } = { token: owner.token },
  ) => ctx.post(HOOKS, { ...auth, body });
  const workspaceKey = async (scope: Record<string, unknown> = {}) => {
    const res = await ctx.post(KEYS, { token: owner.token, body: { name: 'hooks', scope } });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().data.key as string;
  };

  it('creates a webhook with a whsec_ secret shown once and stored encrypted', async () => {
    const res = await create({
      url: publicUrl,
      events: ['trace.flagged', 'review.completed'],
      filterAgentId: agent.id,
      description: ' Ops ',
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.headers['cache-control']).toBe('no-store');
    const data = res.json().data;
    expect(data).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{24}$/),
      url: 'https://93.184.215.14/…',
      urlHost: 'https://93.184.215.14',
      events: ['trace.flagged', 'review.completed'],
      filterAgentId: agent.id,
      description: 'Ops',
      isActive: true,
      disabledReason: null,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
    });
    const [row] = await ctx.db.db.select().from(webhooks).where(eq(webhooks.id, data.id));
    expect(row!.secretSealed).not.toContain(data.secret.slice(6));
    const got = await ctx.get(`${HOOKS}/${data.id}`, { token: viewer.token });
    expect(got.statusCode).toBe(200);
    expect(got.json().data).not.toHaveProperty('secret');
    const list = await ctx.get(HOOKS, { token: member.token });
    expect(list.json().data.map((w: { id: string }) => w.id)).toContain(data.id);
    expect(list.json().data[0]).not.toHaveProperty('secret');
    expect(await auditEntriesOf(ctx, owner.organization.id, 'webhook.created', data.id)).toHaveLength(1);
    expect(
      JSON.stringify(await auditEntriesOf(ctx, owner.organization.id, 'webhook.created', data.id)),
    ).not.toContain(data.secret);
  });

  it('refuses unknown event names, bad URLs and foreign agents with 400, creating nothing', async () => {
    const before = (await ctx.get(HOOKS, { token: owner.token })).json().pagination.total;
    for (const body of [
      { url: publicUrl, events: ['trace.exploded'] },
      { url: publicUrl, events: [] },
      { url: publicUrl, events: ['trace.flagged', 'trace.flagged'] },
      { url: publicUrl },
      { url: 'ftp://93.184.215.14/x', events: ['trace.flagged'] },
      { url: 'not a url', events: ['trace.flagged'] },
      { url: `https://93.184.215.14/${'a'.repeat(2100)}`, events: ['trace.flagged'] },
      { url: publicUrl, events: ['trace.flagged'], filterAgentId: 'agent-1' },
      { url: 'https://name.invalid/hook', events: ['trace.flagged'] },
    ]) {
      expectErrorEnvelope(await create(body), 400, 'VALIDATION_ERROR');
    }
    const theirAgent = await ctx.newAgent(other.organization.id, 'Theirs');
    expectErrorEnvelope(
      await create({ url: publicUrl, events: ['trace.flagged'], filterAgentId: theirAgent.id }),
      400,
      'VALIDATION_ERROR',
    );
    expect((await ctx.get(HOOKS, { token: owner.token })).json().pagination.total).toBe(before);
  });

  it('refuses loopback, private, link-local targets and names resolving to loopback (WEBHOOK_URL_NOT_ALLOWED)', async () => {
    for (const url of [
      'http://127.0.0.1:8080/hook',
      'http://10.0.0.5/hook',
      'http://10.255.1.1/hook',
      'http://169.254.169.254/latest/meta-data/',
      'http://192.168.1.1/',
      'http://172.16.0.1/',
      'http://[::1]/hook',
      'http://[::ffff:127.0.0.1]/hook',
      'http://[fd00::1]/hook',
      'http://0.0.0.0/',
      'http://localhost:3000/hook',
    ]) {
      const res = await create({ url, events: ['trace.flagged'] });
      const body = expectErrorEnvelope(res, 400, 'WEBHOOK_URL_NOT_ALLOWED');
      expect(body.details).toEqual([{ field: 'url', message: expect.any(String) }]);
    }
  });

  it('lets owners and admins write, members and viewers read; a writable workspace key may create and delete', async () => {
    expectErrorEnvelope(
      await create({ url: publicUrl, events: ['trace.flagged'] }, { token: member.token }),
      403,
      'FORBIDDEN',
    );
    expectErrorEnvelope(
      await create({ url: publicUrl, events: ['trace.flagged'] }, { token: viewer.token }),
      403,
      'FORBIDDEN',
    );
    const reader = await workspaceKey({ readOnly: true });
    expectErrorEnvelope(
      await create({ url: publicUrl, events: ['trace.flagged'] }, { apiKey: reader }),
      403,
      'FORBIDDEN',
    );
    const writer = await workspaceKey();
    const made = await create({ url: publicUrl, events: ['trace.blocked'] }, { apiKey: writer });
    expect(made.statusCode, made.body).toBe(201);
    const id = made.json().data.id;
    expect((await ctx.get(HOOKS, { apiKey: reader })).statusCode).toBe(200);
    expectErrorEnvelope(
      await ctx.patch(`${HOOKS}/${id}`, { apiKey: writer, body: { events: ['trace.flagged'] } }),
      403,
      'FORBIDDEN',
    );
    expectErrorEnvelope(await ctx.request('DELETE', `${HOOKS}/${id}`, { apiKey: reader }), 403, 'FORBIDDEN');
    expectErrorEnvelope(
      await ctx.request('DELETE', `${HOOKS}/${id}`, { token: member.token }),
      403,
      'FORBIDDEN',
    );
    const deleted = await ctx.request('DELETE', `${HOOKS}/${id}`, { apiKey: writer });
    expect(deleted.statusCode, deleted.body).toBe(200);
    expect(deleted.json().data).toEqual({ id, deleted: true });
    expectErrorEnvelope(await ctx.get(`${HOOKS}/${id}`, { token: owner.token }), 404, 'NOT_FOUND');

    const scoped = await workspaceKey({ agentIds: [agent.id] });
    expectErrorEnvelope(
      await create({ url: publicUrl, events: ['trace.flagged'] }, { apiKey: scoped }),
      403,
      'FORBIDDEN',
    );
    const filtered = await create(
      { url: publicUrl, events: ['trace.flagged'], filterAgentId: agent.id },
      { apiKey: scoped },
    );
    expect(filtered.statusCode, filtered.body).toBe(201);
  });

  it('updates url, events, filter and description, re-checking the URL; other organizations get 404', async () => {
    const id = (await create({ url: publicUrl, events: ['trace.flagged'] })).json().data.id;
    const res = await ctx.patch(`${HOOKS}/${id}`, {
      token: owner.token,
      body: { events: ['trace.blocked', 'webhook.test'], description: 'New', filterAgentId: agent.id },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toMatchObject({
      events: ['trace.blocked', 'webhook.test'],
      description: 'New',
      filterAgentId: agent.id,
    });
    expectErrorEnvelope(
      await ctx.patch(`${HOOKS}/${id}`, { token: owner.token, body: { url: 'http://127.0.0.1/' } }),
      400,
      'WEBHOOK_URL_NOT_ALLOWED',
    );
    expectErrorEnvelope(
      await ctx.patch(`${HOOKS}/${id}`, { token: owner.token, body: { events: ['nope'] } }),
      400,
      'VALIDATION_ERROR',
    );
    expect((await ctx.get(`${HOOKS}/${id}`, { token: owner.token })).json().data.url).toBe(
      'https://93.184.215.14/…',
    );
    const [row] = await ctx.db.db.select().from(webhooks).where(eq(webhooks.id, id));
    expect(row!.url).toBe(publicUrl);
    expectErrorEnvelope(await ctx.get(`${HOOKS}/${id}`, { token: other.token }), 404, 'NOT_FOUND');
    expectErrorEnvelope(
      await ctx.patch(`${HOOKS}/${id}`, { token: other.token, body: { description: 'x' } }),
      404,
      'NOT_FOUND',
    );
    expectErrorEnvelope(
      await ctx.request('DELETE', `${HOOKS}/${id}`, { token: other.token }),
      404,
      'NOT_FOUND',
    );
    expectErrorEnvelope(await ctx.get(`${HOOKS}/${id}/deliveries`, { token: other.token }), 404, 'NOT_FOUND');
    expectErrorEnvelope(
      await ctx.post(`${HOOKS}/${id}/rotate-secret`, { token: other.token, body: {} }),
      404,
      'NOT_FOUND',
    );
    expectErrorEnvelope(await ctx.get(`${HOOKS}/not-an-id`, { token: owner.token }), 404, 'NOT_FOUND');
    expect((await ctx.get(HOOKS, { token: other.token })).json().data).toEqual([]);
  });

  it('never answers or audits the URL past its host, to any caller; the masked URL sent back keeps it', async () => {
    const secretUrl = 'https://hook-user:hook-pass@93.184.215.14:8443/services/T0/B0/tok-9f8e7d?key=k-1234';
    const admin = await ctx.addMember(owner.organization.id, 'admin');
    const writer = await workspaceKey();
    const reader = await workspaceKey({ readOnly: true });
    const made = await create({ url: secretUrl, events: ['trace.flagged'] });
    expect(made.statusCode, made.body).toBe(201);
    const id: string = made.json().data.id;
    const masked = { url: 'https://93.184.215.14:8443/…', urlHost: 'https://93.184.215.14:8443' };
    expect(made.json().data).toMatchObject(masked);
    const secrets = ['hook-user', 'hook-pass', 'services', 'tok-9f8e7d', 'k-1234'];
    for (const auth of [
      { token: owner.token },
      { token: admin.token },
      { token: member.token },
      { token: viewer.token },
      { apiKey: writer },
      { apiKey: reader },
    ]) {
      const one = await ctx.get(`${HOOKS}/${id}`, auth);
      expect(one.statusCode, one.body).toBe(200);
      expect(one.json().data).toMatchObject(masked);
      const list = await ctx.get(HOOKS, { ...auth, query: { limit: '100' } });
      expect(list.statusCode, list.body).toBe(200);
      expect(list.json().data.find((w: { id: string }) => w.id === id)).toMatchObject(masked);
      for (const secret of secrets) {
        expect(one.body).not.toContain(secret);
        expect(list.body).not.toContain(secret);
      }
    }

    // A form that sends back what it read changes nothing else; the stored URL is the real one.
    const roundTrip = await ctx.patch(`${HOOKS}/${id}`, {
      token: owner.token,
      body: { url: masked.url, description: 'Round trip' },
    });
    expect(roundTrip.statusCode, roundTrip.body).toBe(200);
    expect(roundTrip.json().data).toMatchObject({ ...masked, description: 'Round trip' });
    const [row] = await ctx.db.db.select().from(webhooks).where(eq(webhooks.id, id));
    expect(row!.url).toBe(secretUrl);

    // A new URL is answered masked too; the audit log has hosts only.
    const moved = await ctx.patch(`${HOOKS}/${id}`, {
      token: owner.token,
      body: { url: 'https://93.184.215.15/other/tok-5a4b3c' },
    });
    expect(moved.statusCode, moved.body).toBe(200);
    expect(moved.json().data).toMatchObject({
      url: 'https://93.184.215.15/…',
      urlHost: 'https://93.184.215.15',
    });
    expect((await ctx.request('DELETE', `${HOOKS}/${id}`, { token: owner.token })).statusCode).toBe(200);
    const entries = [
      ...(await auditEntriesOf(ctx, owner.organization.id, 'webhook.created', id)),
      ...(await auditEntriesOf(ctx, owner.organization.id, 'webhook.updated', id)),
      ...(await auditEntriesOf(ctx, owner.organization.id, 'webhook.deleted', id)),
    ];
    expect(entries).toHaveLength(4);
    const audited = JSON.stringify(entries.map((e) => e.metadata));
    expect(audited).toContain('https://93.184.215.14:8443');
    expect(audited).toContain('https://93.184.215.15');
    for (const secret of [...secrets, 'other', 'tok-5a4b3c']) expect(audited).not.toContain(secret);
  });

  it('validates the grace period of a rotation', async () => {
    const id = (await create({ url: publicUrl, events: ['trace.flagged'] })).json().data.id;
    for (const gracePeriodSeconds of [-1, 604_801, 1.5, '60']) {
      expectErrorEnvelope(
        await ctx.post(`${HOOKS}/${id}/rotate-secret`, { token: owner.token, body: { gracePeriodSeconds } }),
        400,
        'VALIDATION_ERROR',
      );
    }
    expectErrorEnvelope(
      await ctx.post(`${HOOKS}/${id}/rotate-secret`, { token: member.token, body: {} }),
      403,
      'FORBIDDEN',
    );
  });
});
