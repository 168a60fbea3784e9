import { describe, expect, it } from 'vitest';
import { sha256Hex } from '#platform';
import { hashBackupCode, newBackupCodes, normaliseBackupCode } from './backup-codes.js';

describe('backup codes', () => {
  it('makes ten distinct codes of two groups of five Crockford Base32 characters', () => {
    const codes = newBackupCodes();
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const code of codes) expect(code).toMatch(/^[0-9A-HJKMNP-TV-Z]{5}-[0-9A-HJKMNP-TV-Z]{5}$/);
    expect(newBackupCodes()).not.toEqual(codes);
  });

  it('ignores case, hyphens and spaces, and reads O as 0 and I or L as 1', () => {
    expect(normaliseBackupCode('7kq2m-9xw4d')).toBe('7KQ2M9XW4D');
    expect(normaliseBackupCode(' 7KQ2M 9XW4D ')).toBe('7KQ2M9XW4D');
    expect(normaliseBackupCode('OIL2M-9XW4D')).toBe('0112M9XW4D');
  });

  it('refuses anything that cannot be a code', () => {
    for (const input of ['', '7KQ2M-9XW4', '7KQ2M-9XW4DD', '7KQ2M-9XW4U', '7KQ2M_9XW4D', '123456'])
      expect(normaliseBackupCode(input)).toBeUndefined();
    expect(hashBackupCode('123456')).toBeUndefined();
  });

  it('hashes the normalised form, so every way of typing a code gives the same hash', () => {
    const hash = hashBackupCode('7KQ2M-9XW4D');
    expect(hash).toBe(sha256Hex('7KQ2M9XW4D'));
    expect(hashBackupCode('7kq2m9xw4d')).toBe(hash);
    expect(hashBackupCode('7KQ2M-9XW4E')).not.toBe(hash);
  });
});
