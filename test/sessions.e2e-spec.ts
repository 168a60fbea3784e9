import { inArray } from 'drizzle-orm';
import jwt from 'jsonwebtoken';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RevokedTokensPurgeJob } from '../libs/identity/src/account/revoked-tokens-purge.job.js';
import { revokedTokens } from '../libs/identity/src/sessions/session.schema.js';
import { expectErrorEnvelope } from './support/assertions.js';
import { auditEntries } from './support/audit-entries.js';
import { type Registered, TEST_PASSWORD, TestContext } from './support/app.js';

const HOUR_MS = 3600 * 1000;
const SEVEN_DAYS_S = 7 * 24 * 3600;

interface Claims {
  _id: string;
  organizationId: string;
  role: string;
  jti: string;
  iat: number;
  exp: number;
}

const claimsOf = (token: string) => jwt.decode(token) as Claims;

interface SessionView {
  sessionId: string;
  createdAt: string;
  expiresAt: string;
  ip: string | null;
  userAgent: string | null;
  current: boolean;
}

describe('sessions: refresh, revocation, listing and session timeout', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await TestContext.create();
  });
  afterAll(async () => ctx?.close());

  /** Logs in through the API with a given user agent, so sessions can be told apart. */
  async function loginAs(email: string, userAgent: string): Promise<string> {
    const res = await ctx.post('/api/v1/auth/login', {
      body: { email, password: TEST_PASSWORD },
      headers: { 'user-agent': userAgent },
    });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data.token;
  }

  async function sessionsOf(token: string): Promise<SessionView[]> {
    const res = await ctx.get('/api/v1/auth/sessions', { token });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data;
  }

  async function expectRevoked(token: string): Promise<void> {
    expectErrorEnvelope(await ctx.get('/api/v1/auth/me', { token }), 401, 'SESSION_REVOKED');
  }

  describe('POST /auth/refresh', () => {
    it('returns a working token with a new jti for the same user, organization and role, and revokes the old one at once', async () => {
      const reg = await ctx.register();
      ctx.clock.advance(1000);
      const res = await ctx.post('/api/v1/auth/refresh', { token: reg.token });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual({ success: true, data: { token: expect.any(String) } });
      const fresh = res.json().data.token as string;

      const before = claimsOf(reg.token);
      const after = claimsOf(fresh);
      expect(after.jti).not.toBe(before.jti);
      expect(after).toMatchObject({ _id: reg.user.id, organizationId: reg.organization.id, role: 'owner' });
      expect(after.exp - after.iat).toBe(SEVEN_DAYS_S);
      expect(after.iat).toBeGreaterThan(before.iat);

      const me = await ctx.get('/api/v1/auth/me', { token: fresh });
      expect(me.statusCode).toBe(200);
      expect(me.json().data).toMatchObject({ user: { id: reg.user.id }, role: 'owner' });
      await expectRevoked(reg.token);
      // A token is refreshed once: the spent one cannot mint another.
      expectErrorEnvelope(
        await ctx.post('/api/v1/auth/refresh', { token: reg.token }),
        401,
        'SESSION_REVOKED',
      );
    });

    it('writes auth.token_refreshed whose id names the new session and whose target is the old one', async () => {
      const reg = await ctx.register();
      const [opened] = await sessionsOf(reg.token);
      const fresh = (await ctx.post('/api/v1/auth/refresh', { token: reg.token })).json().data.token;
      const sessions = await sessionsOf(fresh);
      expect(sessions).toHaveLength(1);
      const current = sessions[0]!;
      expect(current.current).toBe(true);
      expect(current.sessionId).not.toBe(opened!.sessionId);

      const entries = await auditEntries(ctx, fresh, 'auth.token_refreshed');
      expect(entries).toHaveLength(1);
      expect(entries[0]).toMatchObject({
        id: current.sessionId,
        userId: reg.user.id,
        targetType: 'session',
        targetId: opened!.sessionId,
        metadata: { previousSessionId: opened!.sessionId },
      });
    });

    it('lets exactly one of two concurrent refreshes of the same token succeed', async () => {
      const reg = await ctx.register();
      const results = await Promise.all([
        ctx.post('/api/v1/auth/refresh', { token: reg.token }),
        ctx.post('/api/v1/auth/refresh', { token: reg.token }),
      ]);
      expect(results.map((r) => r.statusCode).sort()).toEqual([200, 401]);
      const loser = results.find((r) => r.statusCode === 401)!;
      expectErrorEnvelope(loser, 401, 'SESSION_REVOKED');
      expect(await sessionsOf(results.find((r) => r.statusCode === 200)!.json().data.token)).toHaveLength(1);
    });

    it('uses the session timeout in force at the time of the refresh', async () => {
      const reg = await ctx.register();
      const set = await ctx.patch('/api/v1/auth/me/session-timeout', {
        token: reg.token,
        body: { sessionTimeout: '8h' },
      });
      expect(set.statusCode).toBe(200);
      const fresh = (await ctx.post('/api/v1/auth/refresh', { token: reg.token })).json().data.token;
      const claims = claimsOf(fresh);
      expect(claims.exp - claims.iat).toBe(8 * 3600);
    });

    it('requires a token: 401 UNAUTHORIZED without one', async () => {
      expectErrorEnvelope(await ctx.post('/api/v1/auth/refresh'), 401, 'UNAUTHORIZED');
    });
  });

  describe('POST /auth/revoke-sessions', () => {
    it('revokes every live session of the caller, the current one included, and counts them', async () => {
      const reg = await ctx.register();
      const second = await ctx.login(reg.user.email);
      const third = await ctx.login(reg.user.email);
      const bystander = await ctx.register();

      const res = await ctx.post('/api/v1/auth/revoke-sessions', { token: second });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual({ success: true, data: { revoked: 3 } });
      for (const token of [reg.token, second, third]) await expectRevoked(token);
      expect((await ctx.get('/api/v1/auth/me', { token: bystander.token })).statusCode).toBe(200);

      // Logging in again opens a fresh session, and the audit entry records the sweep.
      const again = await ctx.login(reg.user.email);
      expect((await ctx.get('/api/v1/auth/me', { token: again })).statusCode).toBe(200);
      const entries = await auditEntries(ctx, again, 'auth.session_revoked');
      expect(entries).toHaveLength(1);
      expect(entries[0]).toMatchObject({
        userId: reg.user.id,
        targetType: 'user',
        targetId: reg.user.id,
        metadata: { all: true, count: 3 },
      });
    });

    it('does not count sessions that were already revoked or have expired', async () => {
      const reg = await ctx.register();
      const loggedOut = await ctx.login(reg.user.email);
      await ctx.post('/api/v1/auth/logout', { token: loggedOut });
      await ctx.patch('/api/v1/auth/me/session-timeout', {
        token: reg.token,
        body: { sessionTimeout: '1h' },
      });
      await ctx.login(reg.user.email);
      ctx.clock.advance(HOUR_MS + 1000);
      const res = await ctx.post('/api/v1/auth/revoke-sessions', { token: reg.token });
      expect(res.statusCode).toBe(200);
      expect(res.json().data).toEqual({ revoked: 1 });
    });
  });

  describe('POST /auth/revoke-session', () => {
    it('revokes exactly the named session of the caller and leaves the others working', async () => {
      const reg = await ctx.register();
      const laptop = await loginAs(reg.user.email, 'laptop-browser');
      const phone = await loginAs(reg.user.email, 'phone-browser');
      const target = (await sessionsOf(laptop)).find((s) => s.userAgent === 'phone-browser')!;
      expect(target.current).toBe(false);

      const res = await ctx.post('/api/v1/auth/revoke-session', {
        token: laptop,
        body: { sessionId: target.sessionId },
      });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual({ success: true, data: { revoked: 1 } });
      await expectRevoked(phone);
      for (const token of [reg.token, laptop]) {
        expect((await ctx.get('/api/v1/auth/me', { token })).statusCode).toBe(200);
      }
      expect((await sessionsOf(laptop)).map((s) => s.sessionId)).not.toContain(target.sessionId);

      const entries = await auditEntries(ctx, laptop, 'auth.session_revoked');
      expect(entries).toHaveLength(1);
      expect(entries[0]).toMatchObject({
        targetType: 'session',
        targetId: target.sessionId,
        metadata: { all: false, count: 1, current: false },
      });

      // Again: nothing left to revoke, and no second audit entry.
      const repeat = await ctx.post('/api/v1/auth/revoke-session', {
        token: laptop,
        body: { sessionId: target.sessionId },
      });
      expect(repeat.statusCode).toBe(200);
      expect(repeat.json().data).toEqual({ revoked: 0 });
      expect(await auditEntries(ctx, laptop, 'auth.session_revoked')).toHaveLength(1);
    });

    it('can revoke the caller’s own current session, which then answers SESSION_REVOKED', async () => {
      const reg = await ctx.register();
      const [own] = await sessionsOf(reg.token);
      const res = await ctx.post('/api/v1/auth/revoke-session', {
        token: reg.token,
        body: { sessionId: own!.sessionId },
      });
      expect(res.statusCode).toBe(200);
      expect(res.json().data).toEqual({ revoked: 1 });
      await expectRevoked(reg.token);
    });

    it('answers revoked 0 for an expired session of the caller and writes no audit entry', async () => {
      const reg = await ctx.register();
      await ctx.patch('/api/v1/auth/me/session-timeout', {
        token: reg.token,
        body: { sessionTimeout: '1h' },
      });
      const shortLived = await loginAs(reg.user.email, 'short-lived');
      const target = (await sessionsOf(reg.token)).find((s) => s.userAgent === 'short-lived')!;
      ctx.clock.advance(HOUR_MS);
      const res = await ctx.post('/api/v1/auth/revoke-session', {
        token: reg.token,
        body: { sessionId: target.sessionId },
      });
      expect(res.statusCode).toBe(200);
      expect(res.json().data).toEqual({ revoked: 0 });
      expect(await auditEntries(ctx, reg.token, 'auth.session_revoked')).toEqual([]);
      expectErrorEnvelope(await ctx.get('/api/v1/auth/me', { token: shortLived }), 401, 'TOKEN_EXPIRED');
    });

    it('returns 404 NOT_FOUND for another user’s session and for an unknown id, and revokes nothing', async () => {
      const reg = await ctx.register();
      const other = await ctx.register();
      const [theirs] = await sessionsOf(other.token);
      expectErrorEnvelope(
        await ctx.post('/api/v1/auth/revoke-session', {
          token: reg.token,
          body: { sessionId: theirs!.sessionId },
        }),
        404,
        'NOT_FOUND',
      );
      expectErrorEnvelope(
        await ctx.post('/api/v1/auth/revoke-session', {
          token: reg.token,
          body: { sessionId: 'f'.repeat(24) },
        }),
        404,
        'NOT_FOUND',
      );
      expect((await ctx.get('/api/v1/auth/me', { token: other.token })).statusCode).toBe(200);
    });

    it.each([
      ['a malformed id', { sessionId: 'not-an-id' }],
      ['an upper-case id', { sessionId: 'F'.repeat(24) }],
      ['no id', {}],
      ['a number', { sessionId: 42 }],
    ])('returns 400 VALIDATION_ERROR for %s', async (_case, body) => {
      const reg = await ctx.register();
      const res = await ctx.post('/api/v1/auth/revoke-session', { token: reg.token, body });
      const err = expectErrorEnvelope(res, 400, 'VALIDATION_ERROR');
      expect(err.details).toEqual(expect.arrayContaining([expect.objectContaining({ field: 'sessionId' })]));
    });
  });

  describe('GET /auth/sessions', () => {
    it('lists the caller’s live sessions newest first, marks the current one, and hides ids of tokens', async () => {
      const reg = await ctx.register();
      ctx.clock.advance(1000);
      await loginAs(reg.user.email, 'agent-one');
      ctx.clock.advance(1000);
      const second = await loginAs(reg.user.email, 'agent-two');
      const other = await ctx.register();

      const sessions = await sessionsOf(second);
      expect(sessions).toHaveLength(3);
      expect(sessions.map((s) => s.userAgent)).toEqual(['agent-two', 'agent-one', expect.any(String)]);
      expect(sessions.map((s) => s.current)).toEqual([true, false, false]);
      const claims = claimsOf(second);
      expect(sessions[0]).toEqual({
        sessionId: expect.stringMatching(/^[0-9a-f]{24}$/),
        createdAt: new Date(claims.iat * 1000).toISOString(),
        expiresAt: new Date(claims.exp * 1000).toISOString(),
        ip: expect.any(String),
        userAgent: 'agent-two',
        current: true,
      });
      expect(JSON.stringify(sessions)).not.toContain(claims.jti);
      // The first session is the one register opened: its id is the auth.register entry.
      const registered = await auditEntries(ctx, second, 'auth.register');
      expect(sessions[2]!.sessionId).toBe(registered[0]!.id);
      expect(sessions.map((s) => s.sessionId)).not.toContain((await sessionsOf(other.token))[0]!.sessionId);
    });

    it('leaves out revoked and expired sessions', async () => {
      const reg = await ctx.register();
      const loggedOut = await ctx.login(reg.user.email);
      await ctx.post('/api/v1/auth/logout', { token: loggedOut });
      await ctx.patch('/api/v1/auth/me/session-timeout', {
        token: reg.token,
        body: { sessionTimeout: '1h' },
      });
      await ctx.login(reg.user.email);
      expect(await sessionsOf(reg.token)).toHaveLength(2);
      ctx.clock.advance(HOUR_MS);
      const sessions = await sessionsOf(reg.token);
      expect(sessions).toHaveLength(1);
      expect(sessions[0]!.current).toBe(true);
    });
  });

  describe('PATCH /auth/me/session-timeout', () => {
    it('makes tokens minted afterwards last that long, while the current token keeps its expiry', async () => {
      const reg = await ctx.register();
      const res = await ctx.patch('/api/v1/auth/me/session-timeout', {
        token: reg.token,
        body: { sessionTimeout: '1h' },
      });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual({ success: true, data: { sessionTimeout: '1h' } });

      const next = await ctx.login(reg.user.email);
      const claims = claimsOf(next);
      expect(claims.exp - claims.iat).toBe(3600);
      ctx.clock.advance(HOUR_MS - 1000);
      expect((await ctx.get('/api/v1/auth/me', { token: next })).statusCode).toBe(200);
      ctx.clock.advance(1000);
      expectErrorEnvelope(await ctx.get('/api/v1/auth/me', { token: next }), 401, 'TOKEN_EXPIRED');
      // The token that changed the setting was minted for seven days and still works.
      expect((await ctx.get('/api/v1/auth/me', { token: reg.token })).statusCode).toBe(200);
      const original = claimsOf(reg.token);
      expect(original.exp - original.iat).toBe(SEVEN_DAYS_S);

      const entries = await auditEntries(ctx, reg.token, 'auth.session_timeout_changed');
      expect(entries).toHaveLength(1);
      expect(entries[0]!.metadata).toEqual({ from: '7d', to: '1h' });
    });

    it.each([
      ['24h', 24 * 3600],
      ['8h', 8 * 3600],
      ['7d', SEVEN_DAYS_S],
    ])('accepts %s', async (sessionTimeout, seconds) => {
      const reg = await ctx.register();
      const res = await ctx.patch('/api/v1/auth/me/session-timeout', {
        token: reg.token,
        body: { sessionTimeout },
      });
      expect(res.statusCode).toBe(200);
      expect(res.json().data).toEqual({ sessionTimeout });
      const claims = claimsOf(await ctx.login(reg.user.email));
      expect(claims.exp - claims.iat).toBe(seconds);
    });

    it.each([
      ['an unknown duration', { sessionTimeout: '2h' }],
      ['a number of seconds', { sessionTimeout: 3600 }],
      ['null', { sessionTimeout: null }],
      ['a missing value', {}],
    ])('returns 400 VALIDATION_ERROR for %s and keeps the setting', async (_case, body) => {
      const reg = await ctx.register();
      const res = await ctx.patch('/api/v1/auth/me/session-timeout', { token: reg.token, body });
      const err = expectErrorEnvelope(res, 400, 'VALIDATION_ERROR');
      expect(err.details).toEqual(
        expect.arrayContaining([expect.objectContaining({ field: 'sessionTimeout' })]),
      );
      const claims = claimsOf(await ctx.login(reg.user.email));
      expect(claims.exp - claims.iat).toBe(SEVEN_DAYS_S);
    });
  });

  describe('expired blacklist rows', () => {
    it('keeps revoked tokens blacklisted for 90 days past their expiry, then purges them', async () => {
      const reg: Registered = await ctx.register();
      const longLived = await ctx.login(reg.user.email);
      await ctx.patch('/api/v1/auth/me/session-timeout', {
        token: reg.token,
        body: { sessionTimeout: '1h' },
      });
      const shortLived = await ctx.login(reg.user.email);
      for (const token of [longLived, shortLived]) {
        expect((await ctx.post('/api/v1/auth/logout', { token })).statusCode).toBe(200);
      }
      const jtis = [claimsOf(longLived).jti, claimsOf(shortLived).jti];
      const blacklisted = async () =>
        (
          await ctx.db.db
            .select({ jti: revokedTokens.jti })
            .from(revokedTokens)
            .where(inArray(revokedTokens.jti, jtis))
        ).map((r) => r.jti);
      expect((await blacklisted()).sort()).toEqual([...jtis].sort());

      const job = ctx.app.get(RevokedTokensPurgeJob);
      await job.purge();
      expect((await blacklisted()).sort()).toEqual([...jtis].sort());
      ctx.clock.advance(HOUR_MS + 1000);
      // Expired but revoked: still SESSION_REVOKED (docs/identity-administrators.md, "Identity, roles and plans"),
      // and still blacklisted.
      await job.purge();
      expect((await blacklisted()).sort()).toEqual([...jtis].sort());
      await expectRevoked(shortLived);
      ctx.clock.advance(90 * 24 * HOUR_MS);
      expect(await job.purge()).toBeGreaterThanOrEqual(1);
      expect(await blacklisted()).toEqual([claimsOf(longLived).jti]);
      await expectRevoked(longLived);
      // Past the retention the row is gone and the long-expired token answers TOKEN_EXPIRED.
      expectErrorEnvelope(await ctx.get('/api/v1/auth/me', { token: shortLived }), 401, 'TOKEN_EXPIRED');
    });
  });

  it('requires a JWT on every session route', async () => {
    for (const [method, url] of [
      ['POST', '/api/v1/auth/revoke-sessions'],
      ['POST', '/api/v1/auth/revoke-session'],
      ['GET', '/api/v1/auth/sessions'],
      ['PATCH', '/api/v1/auth/me/session-timeout'],
    ] as const) {
      expectErrorEnvelope(
        await ctx.request(method, url, method === 'GET' ? {} : { body: {} }),
        401,
        'UNAUTHORIZED',
      );
    }
  });
});
