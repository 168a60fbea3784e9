import { createHmac } from 'node:crypto';
import { expect } from 'vitest';
import { type Registered, TEST_PASSWORD, type TestContext } from './app.js';

export const AUTH = '/api/v1/auth';
export const STEP_MS = 30_000;
/** Fifteen seconds into a step, so "the previous step" and "the next step" are each one step away. */
export const MFA_SUITE_START = '2026-05-04T09:00:15.000Z';

/** An independent RFC 6238 implementation (SHA-1, 6 digits, 30 s), so the tests do not trust the service's library. */
function base32Decode(input: string): Buffer {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = '';
  for (const char of input.replace(/=+$/, '')) bits += alphabet.indexOf(char).toString(2).padStart(5, '0');
  const bytes: number[] = [];
  for (let i = 0; i + 8 <= bits.length; i += 8) bytes.push(parseInt(bits.slice(i, i + 8), 2));
  return Buffer.from(bytes);
}

export function totpAt(secret: string, epochMs: number): string {
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(epochMs / STEP_MS)));
  const hmac = createHmac('sha1', base32Decode(secret)).update(counter).digest();
  const offset = hmac[hmac.length - 1]! & 0x0f;
  const value = (hmac.readUInt32BE(offset) & 0x7fffffff) % 1_000_000;
  return value.toString().padStart(6, '0');
}

/** The helpers of the MFA suites, on the suite's context (read when called: it is created in beforeAll). */
export function mfaHelpers(context: () => TestContext) {
  /** The code for the current step of the fixed clock, or `steps` steps away from it. */
  const code = (secret: string, steps = 0) => totpAt(secret, context().clock.nowMs() + steps * STEP_MS);
  /** Moves to the next step, so the next code is not a reuse of the last one accepted. */
  const nextStep = () => context().clock.advance(STEP_MS);

  async function setup(token: string): Promise<{ secret: string; otpauthUrl: string; qrCode: string }> {
    const res = await context().post(`${AUTH}/mfa/setup`, { token });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data;
  }

  /** Registers a user and switches MFA on; the clock is left one step past the code enable used. */
  async function userWithMfa(): Promise<Registered & { secret: string; backupCodes: string[] }> {
    const reg = await context().register();
    const { secret } = await setup(reg.token);
    const res = await context().post(`${AUTH}/mfa/enable`, {
      token: reg.token,
      body: { code: code(secret) },
    });
    expect(res.statusCode, res.body).toBe(200);
    nextStep();
    return { ...reg, secret, backupCodes: res.json().data.backupCodes };
  }

  async function tempTokenFor(email: string): Promise<string> {
    const res = await context().post(`${AUTH}/login`, { body: { email, password: TEST_PASSWORD } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toEqual({ mfaRequired: true, tempToken: expect.any(String) });
    return res.json().data.tempToken;
  }

  async function mfaLogin(tempToken: string, mfaCode: string) {
    return context().post(`${AUTH}/mfa/login`, { body: { tempToken, code: mfaCode } });
  }

  async function settings(token: string) {
    const res = await context().get(`${AUTH}/security-settings`, { token });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data;
  }

  return { code, nextStep, setup, userWithMfa, tempTokenFor, mfaLogin, settings };
}
