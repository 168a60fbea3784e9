import { createHmac } from 'node:crypto';
import { eq } from 'drizzle-orm';
import jwt from 'jsonwebtoken';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Registered, TEST_PASSWORD, TestContext } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';
import { users } from '../libs/identity/src/users/user.schema.js';

const AUTH = '/api/v1/auth';
const STEP_MS = 30_000;
const BACKUP_CODE = /^[0-9A-HJKMNP-TV-Z]{5}-[0-9A-HJKMNP-TV-Z]{5}$/;

/** An independent RFC 6238 implementation (SHA-1, 6 digits, 30 s), so the tests do not trust the service's library. */
function base32Decode(input: string): Buffer {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = '';
  for (const char of input.replace(/=+$/, '')) bits += alphabet.indexOf(char).toString(2).padStart(5, '0');
  const bytes: number[] = [];
  for (let i = 0; i + 8 <= bits.length; i += 8) bytes.push(parseInt(bits.slice(i, i + 8), 2));
  return Buffer.from(bytes);
}

function totpAt(secret: string, epochMs: number): string {
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(epochMs / STEP_MS)));
  const hmac = createHmac('sha1', base32Decode(secret)).update(counter).digest();
  const offset = hmac[hmac.length - 1]! & 0x0f;
  const value = (hmac.readUInt32BE(offset) & 0x7fffffff) % 1_000_000;
  return value.toString().padStart(6, '0');
}

describe('multi-factor authentication (TOTP)', () => {
  let ctx: TestContext;

  beforeAll(async () => {
    // Fifteen seconds into a step, so "the previous step" and "the next step" are each one step away.
    ctx = await TestContext.create({ now: '2026-05-04T09:00:15.000Z' });
  });
  afterAll(async () => ctx?.close());

  /** The code for the current step of the fixed clock, or `steps` steps away from it. */
  const code = (secret: string, steps = 0) => totpAt(secret, ctx.clock.nowMs() + steps * STEP_MS);
  /** Moves to the next step, so the next code is not a reuse of the last one accepted. */
  const nextStep = () => ctx.clock.advance(STEP_MS);

  async function setup(token: string): Promise<{ secret: string; otpauthUrl: string; qrCode: string }> {
    const res = await ctx.post(`${AUTH}/mfa/setup`, { token });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data;
  }

  /** Registers a user and switches MFA on; the clock is left one step past the code enable used. */
  async function userWithMfa(): Promise<Registered & { secret: string; backupCodes: string[] }> {
    const reg = await ctx.register();
    const { secret } = await setup(reg.token);
    const res = await ctx.post(`${AUTH}/mfa/enable`, { token: reg.token, body: { code: code(secret) } });
    expect(res.statusCode, res.body).toBe(200);
    nextStep();
    return { ...reg, secret, backupCodes: res.json().data.backupCodes };
  }

  async function tempTokenFor(email: string): Promise<string> {
    const res = await ctx.post(`${AUTH}/login`, { body: { email, password: TEST_PASSWORD } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toEqual({ mfaRequired: true, tempToken: expect.any(String) });
    return res.json().data.tempToken;
  }

  async function mfaLogin(tempToken: string, mfaCode: string) {
    return ctx.post(`${AUTH}/mfa/login`, { body: { tempToken, code: mfaCode } });
  }

  async function settings(token: string) {
    const res = await ctx.get(`${AUTH}/security-settings`, { token });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data;
  }

  async function auditEntries(token: string, eventType: string) {
    const res = await ctx.get('/api/v1/audit', { token, query: { eventType, limit: '100' } });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data as { eventType: string; userId: string; metadata: Record<string, unknown> }[];
  }

  describe('POST /auth/mfa/setup', () => {
    it('returns a Base32 secret, its otpauth URI and a PNG QR code, and does not turn MFA on yet', async () => {
      const reg = await ctx.register();
      const data = await setup(reg.token);
      expect(data.secret).toMatch(/^[A-Z2-7]{32}$/);
      const uri = new URL(data.otpauthUrl);
      expect(uri.protocol).toBe('otpauth:');
      expect(uri.host).toBe('totp');
      expect(decodeURIComponent(uri.pathname)).toContain(reg.user.email);
      expect(uri.searchParams.get('secret')).toBe(data.secret);
      expect(uri.searchParams.get('issuer')).toBeTruthy();
      expect(data.qrCode).toMatch(/^data:image\/png;base64,/);
      const png = Buffer.from(data.qrCode.split(',')[1]!, 'base64');
      expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));

      expect(await settings(reg.token)).toMatchObject({ mfaEnabled: false, backupCodesRemaining: 0 });
      const login = await ctx.post(`${AUTH}/login`, {
        body: { email: reg.user.email, password: TEST_PASSWORD },
      });
      expect(login.statusCode).toBe(200);
      expect(login.json().data.token).toEqual(expect.any(String));
    });

    it('gives a new secret each time; only the latest one can enable MFA', async () => {
      const reg = await ctx.register();
      const first = await setup(reg.token);
      const second = await setup(reg.token);
      expect(second.secret).not.toBe(first.secret);
      const stale = await ctx.post(`${AUTH}/mfa/enable`, {
        token: reg.token,
        body: { code: code(first.secret) },
      });
      expectErrorEnvelope(stale, 401, 'INVALID_MFA_CODE');
      const ok = await ctx.post(`${AUTH}/mfa/enable`, {
        token: reg.token,
        body: { code: code(second.secret) },
      });
      expect(ok.statusCode).toBe(200);
    });

    it('returns 409 CONFLICT once MFA is enabled, and 401 without a token', async () => {
      const user = await userWithMfa();
      expectErrorEnvelope(await ctx.post(`${AUTH}/mfa/setup`, { token: user.token }), 409, 'CONFLICT');
      expectErrorEnvelope(await ctx.post(`${AUTH}/mfa/setup`), 401, 'UNAUTHORIZED');
    });
  });

  describe('POST /auth/mfa/enable', () => {
    it('turns MFA on with the first code, returns ten distinct backup codes and writes auth.mfa_enabled', async () => {
      const reg = await ctx.register();
      const { secret } = await setup(reg.token);
      const res = await ctx.post(`${AUTH}/mfa/enable`, { token: reg.token, body: { code: code(secret) } });
      expect(res.statusCode).toBe(200);
      const { backupCodes } = res.json().data;
      expect(backupCodes).toHaveLength(10);
      expect(new Set(backupCodes).size).toBe(10);
      for (const backupCode of backupCodes) expect(backupCode).toMatch(BACKUP_CODE);

      expect(await settings(reg.token)).toMatchObject({ mfaEnabled: true, backupCodesRemaining: 10 });
      const me = await ctx.get(`${AUTH}/me`, { token: reg.token });
      expect(me.json().data.user.mfaEnabled).toBe(true);
      const [entry] = await auditEntries(reg.token, 'auth.mfa_enabled');
      expect(entry).toMatchObject({ eventType: 'auth.mfa_enabled', userId: reg.user.id });
      expect(JSON.stringify(entry)).not.toContain(backupCodes[0]);
    });

    it('returns 401 INVALID_MFA_CODE for a wrong code and leaves MFA off', async () => {
      const reg = await ctx.register();
      const { secret } = await setup(reg.token);
      const wrong = String((Number(code(secret)) + 1) % 1_000_000).padStart(6, '0');
      const res = await ctx.post(`${AUTH}/mfa/enable`, { token: reg.token, body: { code: wrong } });
      expectErrorEnvelope(res, 401, 'INVALID_MFA_CODE');
      expect(await settings(reg.token)).toMatchObject({ mfaEnabled: false, backupCodesRemaining: 0 });
      expect(await auditEntries(reg.token, 'auth.mfa_enabled')).toEqual([]);
    });

    it('returns 409 CONFLICT without a pending setup and when already enabled; 400 without a code', async () => {
      const reg = await ctx.register();
      const none = await ctx.post(`${AUTH}/mfa/enable`, { token: reg.token, body: { code: '123456' } });
      expectErrorEnvelope(none, 409, 'CONFLICT');
      const missing = await ctx.post(`${AUTH}/mfa/enable`, { token: reg.token, body: {} });
      const body = expectErrorEnvelope(missing, 400, 'VALIDATION_ERROR');
      expect(body.details).toEqual(expect.arrayContaining([expect.objectContaining({ field: 'code' })]));

      const user = await userWithMfa();
      const again = await ctx.post(`${AUTH}/mfa/enable`, {
        token: user.token,
        body: { code: code(user.secret) },
      });
      expectErrorEnvelope(again, 409, 'CONFLICT');
    });
  });

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

      const logins = await auditEntries(data.token, 'auth.login');
      expect(logins).toHaveLength(1);
      expect(logins[0]!.metadata).toMatchObject({ method: 'password', mfa: true, mfaFactor: 'totp' });
    });

    it('returns 401 INVALID_MFA_CODE for a wrong code and records auth.login_failed with the reason', async () => {
      const user = await userWithMfa();
      const tempToken = await tempTokenFor(user.user.email);
      const wrong = String((Number(code(user.secret)) + 1) % 1_000_000).padStart(6, '0');
      expectErrorEnvelope(await mfaLogin(tempToken, wrong), 401, 'INVALID_MFA_CODE');
      expectErrorEnvelope(await mfaLogin(tempToken, 'not-a-code'), 401, 'INVALID_MFA_CODE');

      const failed = await auditEntries(user.token, 'auth.login_failed');
      expect(failed).toHaveLength(2);
      for (const entry of failed) {
        expect(entry.metadata).toEqual({ method: 'password', reason: 'invalid_mfa_code' });
        expect(JSON.stringify(entry)).not.toContain(wrong);
      }
      expect(await auditEntries(user.token, 'auth.login')).toEqual([]);
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
      expect(await auditEntries(user.token, 'auth.login')).toHaveLength(1);
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
      const logins = await auditEntries(user.token, 'auth.login');
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

  describe('POST /auth/backup-codes/generate', () => {
    it('replaces the whole set after a TOTP code: old codes stop working, new ones work', async () => {
      const user = await userWithMfa();
      expect((await mfaLogin(await tempTokenFor(user.user.email), user.backupCodes[0]!)).statusCode).toBe(
        200,
      );
      expect(await settings(user.token)).toMatchObject({ backupCodesRemaining: 9 });

      const res = await ctx.post(`${AUTH}/backup-codes/generate`, {
        token: user.token,
        body: { code: code(user.secret) },
      });
      expect(res.statusCode, res.body).toBe(200);
      const fresh: string[] = res.json().data.backupCodes;
      expect(fresh).toHaveLength(10);
      expect(fresh.filter((c) => user.backupCodes.includes(c))).toEqual([]);
      expect(await settings(user.token)).toMatchObject({ backupCodesRemaining: 10 });

      const old = await mfaLogin(await tempTokenFor(user.user.email), user.backupCodes[1]!);
      expectErrorEnvelope(old, 401, 'INVALID_MFA_CODE');
      expect((await mfaLogin(await tempTokenFor(user.user.email), fresh[0]!)).statusCode).toBe(200);
      expect(await settings(user.token)).toMatchObject({ backupCodesRemaining: 9 });
      const [entry] = await auditEntries(user.token, 'auth.backup_codes_generated');
      expect(entry).toMatchObject({ userId: user.user.id, metadata: { count: 10 } });
    });

    it('refuses a backup code or a wrong code with 401 INVALID_MFA_CODE and keeps the old set', async () => {
      const user = await userWithMfa();
      for (const attempt of [user.backupCodes[0]!, '000000']) {
        const res = await ctx.post(`${AUTH}/backup-codes/generate`, {
          token: user.token,
          body: { code: attempt },
        });
        expectErrorEnvelope(res, 401, 'INVALID_MFA_CODE');
      }
      expect(await settings(user.token)).toMatchObject({ backupCodesRemaining: 10 });
      expect((await mfaLogin(await tempTokenFor(user.user.email), user.backupCodes[0]!)).statusCode).toBe(
        200,
      );
    });

    it('returns 409 CONFLICT when MFA is off', async () => {
      const reg = await ctx.register();
      const res = await ctx.post(`${AUTH}/backup-codes/generate`, {
        token: reg.token,
        body: { code: '123456' },
      });
      expectErrorEnvelope(res, 409, 'CONFLICT');
    });
  });

  describe('POST /auth/mfa/disable', () => {
    it('needs a valid code; afterwards login returns a token directly and the codes are gone', async () => {
      const user = await userWithMfa();
      const missing = await ctx.post(`${AUTH}/mfa/disable`, { token: user.token, body: {} });
      expectErrorEnvelope(missing, 400, 'VALIDATION_ERROR');
      const wrong = await ctx.post(`${AUTH}/mfa/disable`, { token: user.token, body: { code: '000000' } });
      expectErrorEnvelope(wrong, 401, 'INVALID_MFA_CODE');
      expect(await settings(user.token)).toMatchObject({ mfaEnabled: true, backupCodesRemaining: 10 });

      const res = await ctx.post(`${AUTH}/mfa/disable`, {
        token: user.token,
        body: { code: code(user.secret) },
      });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data).toEqual({ message: expect.any(String) });
      expect(await settings(user.token)).toMatchObject({ mfaEnabled: false, backupCodesRemaining: 0 });

      const login = await ctx.post(`${AUTH}/login`, {
        body: { email: user.user.email, password: TEST_PASSWORD },
      });
      expect(login.statusCode).toBe(200);
      expect(login.json().data).toEqual({
        token: expect.any(String),
        user: expect.objectContaining({ mfaEnabled: false }),
      });
      const [entry] = await auditEntries(user.token, 'auth.mfa_disabled');
      expect(entry).toMatchObject({ userId: user.user.id, metadata: { factor: 'totp' } });

      const again = await ctx.post(`${AUTH}/mfa/disable`, {
        token: user.token,
        body: { code: code(user.secret) },
      });
      expectErrorEnvelope(again, 409, 'CONFLICT');
    });

    it('accepts an unused backup code instead of a TOTP code', async () => {
      const user = await userWithMfa();
      const res = await ctx.post(`${AUTH}/mfa/disable`, {
        token: user.token,
        body: { code: user.backupCodes[3] },
      });
      expect(res.statusCode).toBe(200);
      const [entry] = await auditEntries(user.token, 'auth.mfa_disabled');
      expect(entry!.metadata).toEqual({ factor: 'backup_code' });
    });

    it('lets MFA be set up again with a new secret after it was disabled', async () => {
      const user = await userWithMfa();
      await ctx.post(`${AUTH}/mfa/disable`, { token: user.token, body: { code: code(user.secret) } });
      const { secret } = await setup(user.token);
      expect(secret).not.toBe(user.secret);
      // Same step as the code that disabled MFA: the replay guard belonged to the old secret.
      const res = await ctx.post(`${AUTH}/mfa/enable`, { token: user.token, body: { code: code(secret) } });
      expect(res.statusCode, res.body).toBe(200);
    });
  });

  describe('POST /auth/mfa/resend', () => {
    it('returns a static informational message and sends nothing', async () => {
      const res = await ctx.post(`${AUTH}/mfa/resend`);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ success: true, data: { available: false, message: expect.any(String) } });
    });
  });

  describe('GET /auth/security-settings', () => {
    it('reports MFA state, remaining backup codes and the password age from the clock', async () => {
      const reg = await ctx.register();
      const registeredAt = ctx.clock.now().toISOString();
      expect(await settings(reg.token)).toEqual({
        mfaEnabled: false,
        backupCodesRemaining: 0,
        passwordChangedAt: registeredAt,
        passwordAgeDays: 0,
        trustedDevices: [],
      });
      ctx.clock.advance(3 * 24 * 3600 * 1000 + 60_000);
      expect(await settings(reg.token)).toMatchObject({
        passwordChangedAt: registeredAt,
        passwordAgeDays: 3,
      });
      expectErrorEnvelope(await ctx.get(`${AUTH}/security-settings`), 401, 'UNAUTHORIZED');
    });
  });

  it('keeps the audit chain valid through every MFA write', async () => {
    const user = await userWithMfa();
    expect((await mfaLogin(await tempTokenFor(user.user.email), code(user.secret))).statusCode).toBe(200);
    const generated = await ctx.post(`${AUTH}/backup-codes/generate`, {
      token: user.token,
      body: { code: code(user.secret, 1) },
    });
    expect(generated.statusCode).toBe(200);
    ctx.clock.advance(2 * STEP_MS);
    const disabled = await ctx.post(`${AUTH}/mfa/disable`, {
      token: user.token,
      body: { code: code(user.secret) },
    });
    expect(disabled.statusCode).toBe(200);
    const res = await ctx.get('/api/v1/audit/verify', { token: user.token });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ valid: true, totalEntries: 5 });
  });
});
