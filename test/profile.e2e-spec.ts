import jwt from 'jsonwebtoken';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memberships } from '../libs/identity/src/organizations/organization.schema.js';
import { newId, type Role } from '#platform';
import { expectErrorEnvelope } from './support/assertions.js';
import { auditEntries } from './support/audit-entries.js';
import { type Registered, TEST_PASSWORD, TestContext } from './support/app.js';

describe('profile, organizations, preferences and login activity', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await TestContext.create();
  });
  afterAll(async () => ctx?.close());

  /** Gives an existing user a membership in another organization, as ctx.addMember does for a new user. */
  async function join(organizationId: string, userId: string, role: Role, isActive = true): Promise<void> {
    const now = ctx.clock.now();
    await ctx.db.db.insert(memberships).values({
      id: newId(now.getTime()),
      organizationId,
      userId,
      role,
      isActive,
      createdAt: now,
      updatedAt: now,
    });
  }

  /** A user who owns one organization and is an admin of a second one. */
  async function userWithTwoOrganizations(): Promise<{ user: Registered; other: Registered }> {
    const user = await ctx.register({ organizationName: 'Home Org' });
    ctx.clock.advance(1000);
    const other = await ctx.register({ organizationName: 'Partner Org' });
    ctx.clock.advance(1000);
    await join(other.organization.id, user.user.id, 'admin');
    return { user, other };
  }

  describe('GET /auth/me/orgs', () => {
    it('lists every organization with an active membership, with the role held there, oldest first', async () => {
      const { user, other } = await userWithTwoOrganizations();
      const third = await ctx.register({ organizationName: 'Suspended Org' });
      await join(third.organization.id, user.user.id, 'member', false);

      const res = await ctx.get('/api/v1/auth/me/orgs', { token: user.token });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual({
        success: true,
        data: [
          { organizationId: user.organization.id, name: 'Home Org', role: 'owner', plan: 'sandbox' },
          { organizationId: other.organization.id, name: 'Partner Org', role: 'admin', plan: 'sandbox' },
        ],
      });
      const single = await ctx.get('/api/v1/auth/me/orgs', { token: other.token });
      expect(single.json().data).toEqual([
        { organizationId: other.organization.id, name: 'Partner Org', role: 'owner', plan: 'sandbox' },
      ]);
    });
  });

  describe('POST /auth/switch-org', () => {
    it('returns a token bound to the other organization with the role held there; the previous token keeps working', async () => {
      const { user, other } = await userWithTwoOrganizations();
      const res = await ctx.post('/api/v1/auth/switch-org', {
        token: user.token,
        body: { organizationId: other.organization.id },
      });
      expect(res.statusCode, res.body).toBe(200);
      const data = res.json().data;
      expect(data).toEqual({
        token: expect.any(String),
        organization: {
          id: other.organization.id,
          name: 'Partner Org',
          plan: 'sandbox',
          features: [],
          traceRetentionDays: null,
          contestContact: null,
          piiMasking: null,
          createdAt: expect.any(String),
        },
        role: 'admin',
      });
      expect(jwt.decode(data.token)).toMatchObject({
        _id: user.user.id,
        organizationId: other.organization.id,
        role: 'admin',
      });

      const switched = await ctx.get('/api/v1/auth/me', { token: data.token });
      expect(switched.statusCode).toBe(200);
      expect(switched.json().data).toMatchObject({
        user: { id: user.user.id },
        organization: { id: other.organization.id, name: 'Partner Org' },
        role: 'admin',
      });
      const previous = await ctx.get('/api/v1/auth/me', { token: user.token });
      expect(previous.statusCode).toBe(200);
      expect(previous.json().data).toMatchObject({
        organization: { id: user.organization.id },
        role: 'owner',
      });
    });

    it('writes auth.org_switched in the target organization, whose id names the new session', async () => {
      const { user, other } = await userWithTwoOrganizations();
      const token = (
        await ctx.post('/api/v1/auth/switch-org', {
          token: user.token,
          body: { organizationId: other.organization.id },
        })
      ).json().data.token;
      const sessions = (await ctx.get('/api/v1/auth/sessions', { token })).json().data as {
        sessionId: string;
        current: boolean;
      }[];
      const current = sessions.find((s) => s.current)!;

      const inTarget = await auditEntries(ctx, other.token, 'auth.org_switched');
      expect(inTarget).toHaveLength(1);
      expect(inTarget[0]).toMatchObject({
        id: current.sessionId,
        userId: user.user.id,
        targetId: other.organization.id,
        metadata: { role: 'admin' },
      });
      expect(JSON.stringify(inTarget[0])).not.toContain(user.organization.id);
      expect(await auditEntries(ctx, user.token, 'auth.org_switched')).toEqual([]);
    });

    it('returns 404 NOT_FOUND for an organization the caller is not an active member of, or that does not exist', async () => {
      const { user } = await userWithTwoOrganizations();
      const stranger = await ctx.register({ organizationName: 'Stranger Org' });
      const suspended = await ctx.register({ organizationName: 'Suspended Org' });
      await join(suspended.organization.id, user.user.id, 'member', false);
      for (const organizationId of [stranger.organization.id, suspended.organization.id, 'a'.repeat(24)]) {
        const res = await ctx.post('/api/v1/auth/switch-org', {
          token: user.token,
          body: { organizationId },
        });
        expectErrorEnvelope(res, 404, 'NOT_FOUND');
      }
    });

    it('returns 400 VALIDATION_ERROR for a malformed organization id', async () => {
      const { user } = await userWithTwoOrganizations();
      for (const body of [{ organizationId: 'nope' }, {}, { organizationId: 7 }]) {
        const res = await ctx.post('/api/v1/auth/switch-org', { token: user.token, body });
        const err = expectErrorEnvelope(res, 400, 'VALIDATION_ERROR');
        expect(err.details).toEqual(
          expect.arrayContaining([expect.objectContaining({ field: 'organizationId' })]),
        );
      }
    });
  });

  describe('PATCH /auth/profile', () => {
    it('updates name, locale (canonical BCP 47) and time zone, shows them in /auth/me and audits the change', async () => {
      const reg = await ctx.register({ name: 'Ada' });
      const res = await ctx.patch('/api/v1/auth/profile', {
        token: reg.token,
        body: { name: '  Grace Hopper ', locale: 'en-gb', timezone: 'Europe/Paris' },
      });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data).toEqual({
        id: reg.user.id,
        name: 'Grace Hopper',
        email: reg.user.email,
        locale: 'en-GB',
        timezone: 'Europe/Paris',
        mfaEnabled: false,
        createdAt: expect.any(String),
      });
      const me = await ctx.get('/api/v1/auth/me', { token: reg.token });
      expect(me.json().data.user).toMatchObject({
        name: 'Grace Hopper',
        locale: 'en-GB',
        timezone: 'Europe/Paris',
      });

      const entries = await auditEntries(ctx, reg.token, 'user.profile_updated');
      expect(entries).toHaveLength(1);
      expect(entries[0]!.metadata).toEqual({
        changes: {
          name: { from: 'Ada', to: 'Grace Hopper' },
          locale: { from: 'en', to: 'en-GB' },
          timezone: { from: 'UTC', to: 'Europe/Paris' },
        },
      });
    });

    it('changes only the fields given, and writes nothing when nothing changes', async () => {
      const reg = await ctx.register({ name: 'Ada' });
      const res = await ctx.patch('/api/v1/auth/profile', {
        token: reg.token,
        body: { timezone: 'america/new_york' },
      });
      expect(res.statusCode).toBe(200);
      expect(res.json().data).toMatchObject({ name: 'Ada', locale: 'en', timezone: 'America/New_York' });
      for (const body of [{}, { timezone: 'America/New_York' }]) {
        const same = await ctx.patch('/api/v1/auth/profile', { token: reg.token, body });
        expect(same.statusCode).toBe(200);
        expect(same.json().data).toMatchObject({ name: 'Ada', timezone: 'America/New_York' });
      }
      expect(await auditEntries(ctx, reg.token, 'user.profile_updated')).toHaveLength(1);
    });

    it.each([
      ['an unknown time zone', { timezone: 'Mars/Olympus_Mons' }, 'timezone'],
      ['a UTC offset as time zone', { timezone: '+01:00' }, 'timezone'],
      ['an over-long time zone', { timezone: 'Europe/' + 'x'.repeat(64) }, 'timezone'],
      ['a malformed locale', { locale: 'en_US' }, 'locale'],
      ['a locale that is not a tag', { locale: 'not a locale' }, 'locale'],
      [
        'a well-formed locale over 35 characters',
        { locale: 'de-DE-u-co-phonebk-ca-gregory-nu-latn-hc-h23' },
        'locale',
      ],
      ['an empty name', { name: '   ' }, 'name'],
      ['a name over 200 characters', { name: 'n'.repeat(201) }, 'name'],
      ['a null name', { name: null }, 'name'],
      ['a field that is not part of the profile', { email: 'x@example.com' }, 'email'],
    ])('returns 400 VALIDATION_ERROR for %s and changes nothing', async (_case, body, field) => {
      const reg = await ctx.register({ name: 'Ada' });
      const res = await ctx.patch('/api/v1/auth/profile', { token: reg.token, body });
      const err = expectErrorEnvelope(res, 400, 'VALIDATION_ERROR');
      expect(err.details).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
      const me = await ctx.get('/api/v1/auth/me', { token: reg.token });
      expect(me.json().data.user).toMatchObject({ name: 'Ada', locale: 'en', timezone: 'UTC' });
    });
  });

  describe('GET and PATCH /auth/me/preferences', () => {
    it('starts empty and merges patches: nested objects merge, null removes, other values replace', async () => {
      const reg = await ctx.register();
      const initial = await ctx.get('/api/v1/auth/me/preferences', { token: reg.token });
      expect(initial.statusCode).toBe(200);
      expect(initial.json()).toEqual({ success: true, data: {} });

      const first = await ctx.patch('/api/v1/auth/me/preferences', {
        token: reg.token,
        body: {
          notifications: { weeklyDigest: false, reviewAlerts: true },
          theme: 'dark',
          pinned: ['a', 'b'],
        },
      });
      expect(first.statusCode, first.body).toBe(200);
      expect(first.json().data).toEqual({
        notifications: { weeklyDigest: false, reviewAlerts: true },
        theme: 'dark',
        pinned: ['a', 'b'],
      });

      const second = await ctx.patch('/api/v1/auth/me/preferences', {
        token: reg.token,
        body: { notifications: { reviewAlerts: null }, theme: null, pinned: ['c'], density: 'compact' },
      });
      expect(second.statusCode).toBe(200);
      const merged = { notifications: { weeklyDigest: false }, pinned: ['c'], density: 'compact' };
      expect(second.json().data).toEqual(merged);
      expect((await ctx.get('/api/v1/auth/me/preferences', { token: reg.token })).json().data).toEqual(
        merged,
      );

      const entries = await auditEntries(ctx, reg.token, 'user.preferences_updated');
      expect(entries).toHaveLength(2);
      expect(entries[0]!.metadata).toEqual({ keys: ['notifications', 'theme', 'pinned', 'density'] });

      const other = await ctx.register();
      expect((await ctx.get('/api/v1/auth/me/preferences', { token: other.token })).json().data).toEqual({});
    });

    it('keeps every member when several patches arrive at once', async () => {
      const reg = await ctx.register();
      const results = await Promise.all(
        Array.from({ length: 5 }, (_, i) =>
          ctx.patch('/api/v1/auth/me/preferences', { token: reg.token, body: { widgets: { [`w${i}`]: i } } }),
        ),
      );
      expect(results.map((r) => r.statusCode)).toEqual([200, 200, 200, 200, 200]);
      const stored = (await ctx.get('/api/v1/auth/me/preferences', { token: reg.token })).json().data;
      expect(stored).toEqual({ widgets: { w0: 0, w1: 1, w2: 2, w3: 3, w4: 4 } });
    });

    const deep = (levels: number): unknown => (levels === 0 ? 'leaf' : { n: deep(levels - 1) });
    it.each([
      // A body that is not a JSON object is refused by the JSON body guard, with no field to name.
      ['an array', ['a'], null],
      ['a string', 'dark', null],
      ['null', null, null],
      ['a patch over 16 KiB', { blob: 'x'.repeat(16 * 1024) }, 'preferences'],
      ['nesting deeper than 8 levels', deep(9), 'preferences'],
      // Refused by the JSON body guard, which names the field, before the preferences are looked at.
      ['an unpaired surrogate', { label: 'bad \ud800 text' }, 'label'],
    ])('returns 400 VALIDATION_ERROR for %s and keeps the stored preferences', async (_case, body, field) => {
      const reg = await ctx.register();
      await ctx.patch('/api/v1/auth/me/preferences', { token: reg.token, body: { theme: 'dark' } });
      const res = await ctx.patch('/api/v1/auth/me/preferences', { token: reg.token, body });
      const err = expectErrorEnvelope(res, 400, 'VALIDATION_ERROR');
      if (field === null) expect(err).toMatchObject({ error: 'Request body must be a JSON object' });
      else expect(err.details).toEqual([{ field, message: expect.any(String) }]);
      expect((await ctx.get('/api/v1/auth/me/preferences', { token: reg.token })).json().data).toEqual({
        theme: 'dark',
      });
    });

    it('refuses a patch that would grow the merged preferences beyond 16 KiB', async () => {
      const reg = await ctx.register();
      const half = 'y'.repeat(9 * 1024);
      expect(
        (await ctx.patch('/api/v1/auth/me/preferences', { token: reg.token, body: { a: half } })).statusCode,
      ).toBe(200);
      const res = await ctx.patch('/api/v1/auth/me/preferences', { token: reg.token, body: { b: half } });
      expectErrorEnvelope(res, 400, 'VALIDATION_ERROR');
      // Replacing instead of adding stays within the bound.
      const replace = await ctx.patch('/api/v1/auth/me/preferences', {
        token: reg.token,
        body: { a: null, b: half },
      });
      expect(replace.statusCode).toBe(200);
      expect(Object.keys(replace.json().data)).toEqual(['b']);
    });
  });

  describe('GET /auth/login-activity', () => {
    it('lists the caller’s successful and failed logins newest first, with pagination', async () => {
      const reg = await ctx.register();
      const other = await ctx.register();
      const attempt = async (password: string, userAgent: string) => {
        ctx.clock.advance(1000);
        return ctx.post('/api/v1/auth/login', {
          body: { email: reg.user.email, password },
          headers: { 'user-agent': userAgent },
        });
      };
      expect((await attempt(TEST_PASSWORD, 'first-ok')).statusCode).toBe(200);
      expect((await attempt('Wrong-Password-1', 'bad-guess')).statusCode).toBe(401);
      const last = await attempt(TEST_PASSWORD, 'second-ok');
      expect(last.statusCode).toBe(200);
      await ctx.post('/api/v1/auth/login', {
        body: { email: other.user.email, password: 'Wrong-Password-1' },
      });
      const token = last.json().data.token;

      const res = await ctx.get('/api/v1/auth/login-activity', { token });
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json();
      expect(body.pagination).toEqual({ page: 1, limit: 20, total: 3, totalPages: 1 });
      expect(body.data.map((e: { userAgent: string; success: boolean }) => [e.userAgent, e.success])).toEqual(
        [
          ['second-ok', true],
          ['bad-guess', false],
          ['first-ok', true],
        ],
      );
      expect(body.data[1]).toEqual({
        id: expect.stringMatching(/^[0-9a-f]{24}$/),
        createdAt: expect.any(String),
        ip: expect.any(String),
        userAgent: 'bad-guess',
        method: 'password',
        success: false,
      });
      const times = body.data.map((e: { createdAt: string }) => Date.parse(e.createdAt));
      expect(times).toEqual([...times].sort((a, b) => b - a));

      const page2 = await ctx.get('/api/v1/auth/login-activity', { token, query: { page: '2', limit: '2' } });
      expect(page2.statusCode).toBe(200);
      expect(page2.json().pagination).toEqual({ page: 2, limit: 2, total: 3, totalPages: 2 });
      expect(page2.json().data.map((e: { userAgent: string }) => e.userAgent)).toEqual(['first-ok']);

      const clamped = await ctx.get('/api/v1/auth/login-activity', { token, query: { limit: '500' } });
      expect(clamped.statusCode).toBe(200);
      expect(clamped.json().pagination.limit).toBe(100);
    });

    it.each([
      ['a non-numeric page', { page: 'abc' }],
      ['a zero limit', { limit: '0' }],
      ['an unknown parameter', { sort: 'asc' }],
    ])('returns 400 VALIDATION_ERROR for %s', async (_case, query) => {
      const reg = await ctx.register();
      const res = await ctx.get('/api/v1/auth/login-activity', { token: reg.token, query });
      expectErrorEnvelope(res, 400, 'VALIDATION_ERROR');
    });
  });

  it('requires a JWT on every profile route', async () => {
    for (const [method, url] of [
      ['GET', '/api/v1/auth/me/orgs'],
      ['POST', '/api/v1/auth/switch-org'],
      ['PATCH', '/api/v1/auth/profile'],
      ['GET', '/api/v1/auth/me/preferences'],
      ['PATCH', '/api/v1/auth/me/preferences'],
      ['GET', '/api/v1/auth/login-activity'],
    ] as const) {
      expectErrorEnvelope(
        await ctx.request(method, url, method === 'GET' ? {} : { body: {} }),
        401,
        'UNAUTHORIZED',
      );
    }
  });
});
