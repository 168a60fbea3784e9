import { describe, expect, it } from 'vitest';
import { hashPassword, passwordPolicyViolation, verifyPassword } from './password.js';

describe('password policy', () => {
  it.each([
    ['Short1a', /at least 10/],
    ['alllowercase1', /uppercase/],
    ['ALLUPPERCASE1', /lowercase/],
    ['NoDigitsAtAll', /digit/],
    ['Aa1' + 'x'.repeat(126), /at most 128/],
  ])('refuses %s', (password, message) => {
    expect(passwordPolicyViolation(password)).toMatch(message);
  });

  it('accepts ten characters with upper case, lower case and a digit', () => {
    expect(passwordPolicyViolation('Abcdefghi1')).toBeUndefined();
  });
});

describe('argon2id hashing', () => {
  it('stores an argon2id hash that verifies only the same password', async () => {
    const hash = await hashPassword('Correct-Horse-9');
    expect(hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    await expect(verifyPassword(hash, 'Correct-Horse-9')).resolves.toBe(true);
    await expect(verifyPassword(hash, 'Correct-Horse-8')).resolves.toBe(false);
  });

  it('returns false, after the same work, when there is no hash', async () => {
    await expect(verifyPassword(undefined, 'anything')).resolves.toBe(false);
    await expect(verifyPassword(null, 'anything')).resolves.toBe(false);
    await expect(verifyPassword('not-a-hash', 'anything')).resolves.toBe(false);
  });
});
