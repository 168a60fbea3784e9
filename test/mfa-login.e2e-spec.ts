import { eq } from 'drizzle-orm';
import jwt from 'jsonwebtoken';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_PASSWORD, TestContext } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';
import { auditEntries } from './support/audit-entries.js';
import { AUTH, MFA_SUITE_START, mfaHelpers, STEP_MS } from './support/mfa-suite.js';
import { users } from '../libs/identity/src/users/user.schema.js';

describe('multi-factor authentication (TOTP)', () => {
  let ctx: TestContext;

  beforeAll(async () => {
    ctx = await TestContext.create({ now: MFA_SUITE_START });
  });
  afterAll(async () => ctx?.close());

  const { code, nextStep, userWithMfa, tempTokenFor, mfaLogin, settings } = mfaHelpers(() => ctx);

  describe('POST /auth/mfa/login', () => {
    it('needs the code after the password: login gives a tempToken only, mfa/login gives a working JWT', async () => {
      const user = await userWithMfa();
      const login = await ctx.post(`${AUTH}/login`, {
        body: { email: user.user.email, password: TEST_PASSWORD },
      });
      expect(login.statusCode).toBe(200);
      expect(login.json().data).toEqual({ mfaRequired: true, tempToken: expect.any(String) });
      expect(login.json().data).not.toHaveProperty('token');

      const res = await mfaLogin(login.json().data.tempToken, code(user.secret));
      expect(res.statusCode, res.body).toBe(200);
      const { data } = res.json();
      expect(data.user).toMatchObject({ id: user.user.id, email: user.user.email, mfaEnabled: true });
      expect(jwt.decode(data.token)).toMatchObject({
        _id: user.user.id,
        organizationId: user.organization.id,
      });
      const me = await ctx.get(`${AUTH}/me`, { token: data.token });
      expect(me.statusCode).toBe(200);
      expect(me.json().data.user.id).toBe(user.user.id);

      const logins = await auditEntries(ctx, data.token, 'auth.login', { limit: '100' });
      expect(logins).toHaveLength(1);
      expect(logins[0]!.metadata).toMatchObject({ method: 'password', mfa: true, mfaFactor: 'totp' });
    });

    it('returns 401 INVALID_MFA_CODE for a wrong code and records auth.login_failed with the reason', async () => {
      const user = await userWithMfa();
      const tempToken = await tempTokenFor(user.user.email);
      const wrong = String((Number(code(user.secret)) + 1) % 1_000_000).padStart(6, '0');
      expectErrorEnvelope(await mfaLogin(tempToken, wrong), 401, 'INVALID_MFA_CODE');
      expectErrorEnvelope(await mfaLogin(tempToken, 'not-a-code'), 401, 'INVALID_MFA_CODE');

      const failed = await auditEntries(ctx, user.token, 'auth.login_failed', { limit: '100' });
      expect(failed).toHaveLength(2);
      for (const entry of failed) {
        expect(entry.metadata).toEqual({ method: 'password', reason: 'invalid_mfa_code' });
        expect(JSON.stringify(entry)).not.toContain(wrong);
      }
      expect(await auditEntries(ctx, user.token, 'auth.login', { limit: '100' })).toEqual([]);
      // The same tempToken still works with the right code.
      expect((await mfaLogin(tempToken, code(user.secret))).statusCode).toBe(200);
    });

    it('refuses a code a second time in its step, and accepts the code of the next step', async () => {
      const user = await userWithMfa();
      const current = code(user.secret);
      expect((await mfaLogin(await tempTokenFor(user.user.email), current)).statusCode).toBe(200);
      const replay = await mfaLogin(await tempTokenFor(user.user.email), current);
      expectErrorEnvelope(replay, 401, 'INVALID_MFA_CODE');
      nextStep();
      expect((await mfaLogin(await tempTokenFor(user.user.email), code(user.secret))).statusCode).toBe(200);
    });

    it('accepts exactly one of concurrent logins with the same code', async () => {
      const user = await userWithMfa();
      const tempTokens = await Promise.all([1, 2, 3].map(() => tempTokenFor(user.user.email)));
      const current = code(user.secret);
      const results = await Promise.all(tempTokens.map((t) => mfaLogin(t, current)));
      expect(results.map((r) => r.statusCode).sort()).toEqual([200, 401, 401]);
      expect(await auditEntries(ctx, user.token, 'auth.login', { limit: '100' })).toHaveLength(1);
    });

    it('accepts the codes of the previous and the next step and refuses codes two steps away', async () => {
      const user = await userWithMfa();
      // Three steps past the one enable used, so the previous step here has never been used.
      ctx.clock.advance(2 * STEP_MS);
      for (const steps of [-2, 2]) {
        const res = await mfaLogin(await tempTokenFor(user.user.email), code(user.secret, steps));
        expectErrorEnvelope(res, 401, 'INVALID_MFA_CODE');
      }
      for (const steps of [-1, 1]) {
        const res = await mfaLogin(await tempTokenFor(user.user.email), code(user.secret, steps));
        expect(res.statusCode, `step ${steps}: ${res.body}`).toBe(200);
      }
    });

    it('accepts each backup code once, in any case and without the hyphen, and counts what is left', async () => {
      const user = await userWithMfa();
      const [first, second] = user.backupCodes as [string, string];
      expect((await mfaLogin(await tempTokenFor(user.user.email), first)).statusCode).toBe(200);
      expect(await settings(user.token)).toMatchObject({ backupCodesRemaining: 9 });
      expectErrorEnvelope(
        await mfaLogin(await tempTokenFor(user.user.email), first),
        401,
        'INVALID_MFA_CODE',
      );

      const typed = second.replace('-', '').toLowerCase();
      const res = await mfaLogin(await tempTokenFor(user.user.email), typed);
      expect(res.statusCode).toBe(200);
      expect(await settings(user.token)).toMatchObject({ mfaEnabled: true, backupCodesRemaining: 8 });
      const logins = await auditEntries(ctx, user.token, 'auth.login', { limit: '100' });
      expect(logins.map((l) => l.metadata.mfaFactor)).toEqual(['backup_code', 'backup_code']);
    });

    it('refuses a tempToken after its 5 minutes with 401 UNAUTHORIZED', async () => {
      const user = await userWithMfa();
      const early = await tempTokenFor(user.user.email);
      const late = await tempTokenFor(user.user.email);
      ctx.clock.advance(299_000);
      expect((await mfaLogin(early, code(user.secret))).statusCode).toBe(200);
      ctx.clock.advance(1_000);
      // UNAUTHORIZED, not INVALID_MFA_CODE: the token is refused before the (already used) code is looked at.
      expectErrorEnvelope(await mfaLogin(late, code(user.secret)), 401, 'UNAUTHORIZED');
      nextStep();
      expectErrorEnvelope(await mfaLogin(late, code(user.secret)), 401, 'UNAUTHORIZED');
      expect((await mfaLogin(await tempTokenFor(user.user.email), code(user.secret))).statusCode).toBe(200);
    });

    it('refuses a forged tempToken, an access token in its place, and one issued before MFA was disabled', async () => {
      const user = await userWithMfa();
      const real = await tempTokenFor(user.user.email);
      const claims = jwt.decode(real) as jwt.JwtPayload;
      expect(claims).toMatchObject({
        purpose: 'mfa',
        sub: user.user.id,
        organizationId: user.organization.id,
      });
      expect(claims.exp! - claims.iat!).toBe(300);
      const forged = jwt.sign(claims, 'another-secret-that-is-long-enough-to-sign', { algorithm: 'HS256' });
      for (const tempToken of [forged, user.token, 'not.a.jwt']) {
        expectErrorEnvelope(await mfaLogin(tempToken, code(user.secret)), 401, 'UNAUTHORIZED');
      }

      const disabled = await ctx.post(`${AUTH}/mfa/disable`, {
        token: user.token,
        body: { code: code(user.secret) },
      });
      expect(disabled.statusCode).toBe(200);
      nextStep();
      expectErrorEnvelope(await mfaLogin(real, code(user.secret)), 401, 'UNAUTHORIZED');
    });

    it('refuses a tempToken issued before the password was last changed', async () => {
      const user = await userWithMfa();
      const stale = await tempTokenFor(user.user.email);
      ctx.clock.advance(STEP_MS);
      await ctx.db.db
        .update(users)
        .set({ passwordChangedAt: ctx.clock.now() })
        .where(eq(users.id, user.user.id));
      expectErrorEnvelope(await mfaLogin(stale, code(user.secret)), 401, 'UNAUTHORIZED');
      expect((await mfaLogin(await tempTokenFor(user.user.email), code(user.secret))).statusCode).toBe(200);
    });

    it('does not accept a tempToken as a bearer token', async () => {
      const user = await userWithMfa();
      const tempToken = await tempTokenFor(user.user.email);
      for (const url of [`${AUTH}/me`, `${AUTH}/security-settings`]) {
        expectErrorEnvelope(await ctx.get(url, { token: tempToken }), 401, 'UNAUTHORIZED');
      }
      expectErrorEnvelope(await ctx.post(`${AUTH}/mfa/setup`, { token: tempToken }), 401, 'UNAUTHORIZED');
    });

    it('returns 400 VALIDATION_ERROR naming the missing fields', async () => {
      const res = await ctx.post(`${AUTH}/mfa/login`, { body: {} });
      const body = expectErrorEnvelope(res, 400, 'VALIDATION_ERROR');
      const fields = (body.details as { field: string }[]).map((d) => d.field);
      expect(fields).toEqual(expect.arrayContaining(['code', 'tempToken']));
    });
  });

  describe('attempt cap', () => {
    it('refuses a user’s MFA step with 429 after ten wrong codes in 15 minutes, whatever the address, and lets it again later', async () => {
      const user = await userWithMfa();
      const valid = new Set([code(user.secret, -1), code(user.secret), code(user.secret, 1)]);
      const wrong = ['000000', '111111', '222222', '333333'].find((c) => !valid.has(c))!;
      const tempToken = await tempTokenFor(user.user.email);
      for (let i = 0; i < 10; i++) {
        const res = await ctx.app.inject({
          method: 'POST',
          url: `${AUTH}/mfa/login`,
          remoteAddress: `10.9.${i}.1`,
          headers: { 'content-type': 'application/json' },
          payload: JSON.stringify({ tempToken, code: wrong }),
        });
        expectErrorEnvelope(res, 401, 'INVALID_MFA_CODE');
      }
      const capped = await mfaLogin(tempToken, code(user.secret));
      expectErrorEnvelope(capped, 429, 'RATE_LIMIT_EXCEEDED');
      expect(Number(capped.headers['retry-after'])).toBeGreaterThan(0);
      expect(Number(capped.headers['retry-after'])).toBeLessThanOrEqual(15 * 60);

      ctx.clock.advance(15 * 60 * 1000 + 1000);
      const fresh = await tempTokenFor(user.user.email);
      const res = await mfaLogin(fresh, code(user.secret));
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data.token).toEqual(expect.any(String));
    });
  });

  describe('attempt cap on authenticated MFA routes', () => {
    it('counts wrong codes on disable and backup-codes/generate toward the same cap', async () => {
      const user = await userWithMfa();
      const valid = new Set([code(user.secret, -1), code(user.secret), code(user.secret, 1)]);
      const wrong = ['000000', '111111', '222222', '333333'].find((c) => !valid.has(c))!;
      for (let i = 0; i < 5; i++) {
        expectErrorEnvelope(
          await ctx.post(`${AUTH}/mfa/disable`, { token: user.token, body: { code: wrong } }),
          401,
          'INVALID_MFA_CODE',
        );
        expectErrorEnvelope(
          await ctx.post(`${AUTH}/backup-codes/generate`, { token: user.token, body: { code: wrong } }),
          401,
          'INVALID_MFA_CODE',
        );
      }
      const capped = await ctx.post(`${AUTH}/mfa/disable`, {
        token: user.token,
        body: { code: code(user.secret) },
      });
      expectErrorEnvelope(capped, 429, 'RATE_LIMIT_EXCEEDED');
      expect((await settings(user.token)).mfaEnabled).toBe(true);
    });
  });
});
