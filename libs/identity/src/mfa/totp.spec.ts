import { describe, expect, it } from 'vitest';
import { isTotpCode, matchTotpStep, newTotpSecret, totpUri } from './totp.js';

// RFC 6238 appendix B: the SHA-1 seed "12345678901234567890" in Base32; six-digit codes are the last six digits.
const RFC_SECRET = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ';
const RFC_VECTORS: [number, string][] = [
  [59, '287082'],
  [1111111109, '081804'],
  [1111111111, '050471'],
  [1234567890, '005924'],
  [2000000000, '279037'],
  [20000000000, '353130'],
];

describe('TOTP', () => {
  it.each(RFC_VECTORS)('accepts the RFC 6238 code at %i s and names its step', async (seconds, code) => {
    expect(await matchTotpStep(RFC_SECRET, code, seconds * 1000)).toBe(Math.floor(seconds / 30));
  });

  it('accepts one step either side of now and refuses two', async () => {
    const step = Math.floor(1111111109 / 30);
    const at = (s: number) => (s * 30 + 15) * 1000;
    expect(await matchTotpStep(RFC_SECRET, '081804', at(step - 1))).toBe(step);
    expect(await matchTotpStep(RFC_SECRET, '081804', at(step + 1))).toBe(step);
    expect(await matchTotpStep(RFC_SECRET, '081804', at(step - 2))).toBeUndefined();
    expect(await matchTotpStep(RFC_SECRET, '081804', at(step + 2))).toBeUndefined();
  });

  it('refuses malformed codes and a wrong code without throwing', async () => {
    for (const code of ['', '08180', '0818044', '08180a', ' 081804', '081-804'])
      expect(await matchTotpStep(RFC_SECRET, code, 1111111109_000)).toBeUndefined();
    expect(await matchTotpStep(RFC_SECRET, '081805', 1111111109_000)).toBeUndefined();
    expect(await matchTotpStep('not base32!', '081804', 1111111109_000)).toBeUndefined();
  });

  it('recognises the shape of a TOTP code', () => {
    expect(isTotpCode('012345')).toBe(true);
    expect(isTotpCode('12345')).toBe(false);
    expect(isTotpCode('ABCDE-12345')).toBe(false);
  });

  it('makes 160-bit Base32 secrets, different each time', () => {
    const a = newTotpSecret();
    expect(a).toMatch(/^[A-Z2-7]{32}$/);
    expect(newTotpSecret()).not.toBe(a);
  });

  it('writes an otpauth URI with issuer, account, secret and the RFC parameters', () => {
    const uri = new URL(totpUri(RFC_SECRET, 'ada@example.com'));
    expect(uri.protocol).toBe('otpauth:');
    expect(uri.host).toBe('totp');
    expect(decodeURIComponent(uri.pathname)).toBe('/Governance Service:ada@example.com');
    expect(uri.searchParams.get('secret')).toBe(RFC_SECRET);
    expect(uri.searchParams.get('issuer')).toBe('Governance Service');
    for (const [key, value] of [
      ['algorithm', 'SHA1'],
      ['digits', '6'],
      ['period', '30'],
    ])
      expect([null, value]).toContain(uri.searchParams.get(key));
  });
});
