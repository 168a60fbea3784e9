import jwt from 'jsonwebtoken';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_PASSWORD, TestContext, uniqueEmail } from './support/app.js';

const SEVEN_DAYS_MS = 7 * 24 * 3600 * 1000;

describe('registration, login and sessions', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await TestContext.create();
  });
  afterAll(async () => ctx?.close());

  describe('POST /auth/register', () => {
    it('creates the user, an organization on the default plan with the caller as owner, and returns a JWT', async () => {
      const email = uniqueEmail('reg');
      const res = await ctx.post('/api/v1/auth/register', {
        body: {
          name: ' Ada ',
          email: email.toUpperCase(),
          password: TEST_PASSWORD,
          organizationName: 'Engines',
        },
      });
      expect(res.statusCode).toBe(201);
      const { data } = res.json();
      expect(data.user).toEqual({
        id: expect.stringMatching(/^[0-9a-f]{24}$/),
        name: 'Ada',
        email,
        locale: 'en',
        timezone: 'UTC',
        mfaEnabled: false,
        createdAt: ctx.clock.now().toISOString(),
      });
      expect(JSON.stringify(data)).not.toMatch(/argon2|passwordHash/);
      expect(data.organization).toMatchObject({ name: 'Engines', plan: 'sandbox', features: [] });
      const claims = jwt.decode(data.token) as Record<string, unknown>;
      expect(claims).toMatchObject({
        _id: data.user.id,
        sub: data.user.id,
        organizationId: data.organization.id,
        role: 'owner',
      });
      expect(claims.jti).toEqual(expect.any(String));
      expect((claims.exp as number) - (claims.iat as number)).toBe(7 * 24 * 3600);

      const me = await ctx.get('/api/v1/auth/me', { token: data.token });
      expect(me.statusCode).toBe(200);
      expect(me.json().data).toMatchObject({
        user: { id: data.user.id, email },
        organization: { id: data.organization.id, name: 'Engines', plan: 'sandbox', features: [] },
        role: 'owner',
      });
    });

    it('returns 409 EMAIL_IN_USE for an address already registered, whatever its case, and creates nothing', async () => {
      const first = await ctx.register();
      const res = await ctx.post('/api/v1/auth/register', {
        body: {
          name: 'X',
          email: first.user.email.toUpperCase(),
          password: TEST_PASSWORD,
          organizationName: 'Dup',
        },
      });
      expect(res.statusCode).toBe(409);
      expect(res.json()).toEqual({ success: false, error: expect.any(String), code: 'EMAIL_IN_USE' });
      const orgs = await ctx.db.db.execute(`select count(*)::int as n from organizations where name = 'Dup'`);
      expect((orgs as unknown as { rows: { n: number }[] }).rows[0]!.n).toBe(0);
    });

    it('lets exactly one of several concurrent registrations of the same address succeed', async () => {
      const email = uniqueEmail('race');
      const results = await Promise.all(
        Array.from({ length: 5 }, () =>
          ctx.post('/api/v1/auth/register', {
            body: { name: 'Racer', email, password: TEST_PASSWORD, organizationName: 'Race' },
          }),
        ),
      );
      const statuses = results.map((r) => r.statusCode).sort();
      expect(statuses).toEqual([201, 409, 409, 409, 409]);
    });

    it.each([
      ['too short', 'Short1a'],
      ['no uppercase letter', 'lowercase-only-1'],
      ['no lowercase letter', 'UPPERCASE-ONLY-1'],
      ['no digit', 'No-Digits-Here'],
      ['longer than 128 characters', 'Aa1' + 'x'.repeat(130)],
    ])('refuses a password with %s: 400 VALIDATION_ERROR naming the field', async (_case, password) => {
      const res = await ctx.post('/api/v1/auth/register', {
        body: { name: 'Weak', email: uniqueEmail('weak'), password, organizationName: 'Weak' },
      });
      expect(res.statusCode).toBe(400);
      const body = res.json();
      expect(body.code).toBe('VALIDATION_ERROR');
      expect(body.details).toEqual(expect.arrayContaining([expect.objectContaining({ field: 'password' })]));
    });

    it('refuses a missing organization name and an invalid e-mail with one detail each', async () => {
      const res = await ctx.post('/api/v1/auth/register', {
        body: { name: 'N', email: 'not-an-email', password: TEST_PASSWORD },
      });
      expect(res.statusCode).toBe(400);
      const fields = res.json().details.map((d: { field: string }) => d.field);
      expect(fields).toEqual(expect.arrayContaining(['email', 'organizationName']));
    });
  });

  describe('POST /auth/login', () => {
    it('returns a token and the user for the right password', async () => {
      const reg = await ctx.register();
      const res = await ctx.post('/api/v1/auth/login', {
        body: { email: reg.user.email, password: TEST_PASSWORD },
      });
      expect(res.statusCode).toBe(200);
      expect(res.json().data.user.id).toBe(reg.user.id);
      expect(res.json().data.token).not.toBe(reg.token);
    });

    it('gives the same 401 INVALID_CREDENTIALS body for a wrong password and an unknown e-mail', async () => {
      const reg = await ctx.register();
      const wrong = await ctx.post('/api/v1/auth/login', {
        body: { email: reg.user.email, password: 'Wrong-pass-123' },
      });
      const unknown = await ctx.post('/api/v1/auth/login', {
        body: { email: uniqueEmail('nobody'), password: 'Wrong-pass-123' },
      });
      expect(wrong.statusCode).toBe(401);
      expect(unknown.statusCode).toBe(401);
      expect(wrong.json()).toEqual({
        success: false,
        error: 'Invalid e-mail or password',
        code: 'INVALID_CREDENTIALS',
      });
      expect(unknown.json()).toEqual(wrong.json());
    });

    it('returns 401 ACCOUNT_DEACTIVATED when the only membership is suspended, and the open JWT stops working', async () => {
      const owner = await ctx.register();
      const member = await ctx.addMember(owner.organization.id, 'member');
      await ctx.setMembershipActive(owner.organization.id, member.userId, false);
      const login = await ctx.post('/api/v1/auth/login', {
        body: { email: member.email, password: TEST_PASSWORD },
      });
      expect(login.statusCode).toBe(401);
      expect(login.json().code).toBe('ACCOUNT_DEACTIVATED');
      const me = await ctx.get('/api/v1/auth/me', { token: member.token });
      expect(me.statusCode).toBe(401);
      expect(me.json().code).toBe('ACCOUNT_DEACTIVATED');
      await ctx.setMembershipActive(owner.organization.id, member.userId, true);
      expect((await ctx.get('/api/v1/auth/me', { token: member.token })).statusCode).toBe(200);
    });
  });

  describe('tokens', () => {
    it('revokes the jti on logout: the same token then gets 401 SESSION_REVOKED everywhere, another session keeps working', async () => {
      const reg = await ctx.register();
      const other = await ctx.login(reg.user.email);
      const out = await ctx.post('/api/v1/auth/logout', { token: reg.token });
      expect(out.statusCode).toBe(200);
      for (const url of ['/api/v1/auth/me', '/api/v1/organizations/current', '/api/v1/audit']) {
        const res = await ctx.get(url, { token: reg.token });
        expect(res.statusCode).toBe(401);
        expect(res.json().code).toBe('SESSION_REVOKED');
      }
      expect((await ctx.post('/api/v1/auth/logout', { token: reg.token })).json().code).toBe(
        'SESSION_REVOKED',
      );
      expect((await ctx.get('/api/v1/auth/me', { token: other })).statusCode).toBe(200);
    });

    it('returns 401 TOKEN_EXPIRED once the clock passes the token lifetime', async () => {
      const reg = await ctx.register();
      ctx.clock.advance(SEVEN_DAYS_MS - 1000);
      expect((await ctx.get('/api/v1/auth/me', { token: reg.token })).statusCode).toBe(200);
      ctx.clock.advance(1000);
      const res = await ctx.get('/api/v1/auth/me', { token: reg.token });
      expect(res.statusCode).toBe(401);
      expect(res.json().code).toBe('TOKEN_EXPIRED');
    });

    it('keeps answering SESSION_REVOKED for a revoked token after it would have expired', async () => {
      const reg = await ctx.register();
      await ctx.post('/api/v1/auth/logout', { token: reg.token });
      ctx.clock.advance(SEVEN_DAYS_MS + 60_000);
      expect((await ctx.get('/api/v1/auth/me', { token: reg.token })).json().code).toBe('SESSION_REVOKED');
    });

    it('refuses a token signed with another secret, an unsigned token and a token from a deleted membership', async () => {
      const reg = await ctx.register();
      const claims = jwt.decode(reg.token) as jwt.JwtPayload;
      const forged = jwt.sign({ ...claims }, 'another-secret-that-is-long-enough-to-sign', {
        algorithm: 'HS256',
      });
      const none = jwt.sign({ ...claims }, '', { algorithm: 'none' });
      for (const token of [forged, none, 'not.a.jwt']) {
        const res = await ctx.get('/api/v1/auth/me', { token });
        expect(res.statusCode).toBe(401);
        expect(res.json().code).toBe('UNAUTHORIZED');
      }
      await ctx.db.db.execute(`delete from memberships where user_id = '${reg.user.id}'`);
      const res = await ctx.get('/api/v1/auth/me', { token: reg.token });
      expect(res.statusCode).toBe(401);
      expect(res.json().code).toBe('UNAUTHORIZED');
    });

    it('requires credentials on authenticated routes: 401 UNAUTHORIZED without a token', async () => {
      const res = await ctx.get('/api/v1/auth/me');
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({ success: false, error: expect.any(String), code: 'UNAUTHORIZED' });
    });
  });

  it('serves concurrent logins and profile writes of one user without a deadlock', async () => {
    const reg = await ctx.register();
    for (let round = 0; round < 3; round++) {
      const results = await Promise.all([
        ...Array.from({ length: 4 }, () =>
          ctx.post('/api/v1/auth/login', { body: { email: reg.user.email, password: TEST_PASSWORD } }),
        ),
        ...Array.from({ length: 8 }, (_, i) =>
          ctx.patch('/api/v1/auth/me/preferences', { token: reg.token, body: { [`k${round}_${i}`]: i } }),
        ),
      ]);
      expect(results.map((r) => r.statusCode)).toEqual(Array(12).fill(200));
    }
  });
});
