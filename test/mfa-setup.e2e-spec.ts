import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_PASSWORD, TestContext } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';
import { auditEntries } from './support/audit-entries.js';
import { AUTH, MFA_SUITE_START, mfaHelpers, STEP_MS } from './support/mfa-suite.js';

const BACKUP_CODE = /^[0-9A-HJKMNP-TV-Z]{5}-[0-9A-HJKMNP-TV-Z]{5}$/;

describe('multi-factor authentication (TOTP)', () => {
  let ctx: TestContext;

  beforeAll(async () => {
    ctx = await TestContext.create({ now: MFA_SUITE_START });
  });
  afterAll(async () => ctx?.close());

  const { code, setup, userWithMfa, tempTokenFor, mfaLogin, settings } = mfaHelpers(() => ctx);

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
      const [entry] = await auditEntries(ctx, reg.token, 'auth.mfa_enabled', { limit: '100' });
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
      expect(await auditEntries(ctx, reg.token, 'auth.mfa_enabled', { limit: '100' })).toEqual([]);
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
      const [entry] = await auditEntries(ctx, user.token, 'auth.backup_codes_generated', { limit: '100' });
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
      const [entry] = await auditEntries(ctx, user.token, 'auth.mfa_disabled', { limit: '100' });
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
      const [entry] = await auditEntries(ctx, user.token, 'auth.mfa_disabled', { limit: '100' });
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
