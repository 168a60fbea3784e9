import { randomInt } from 'node:crypto';
import { sha256Hex } from '#platform';

export const BACKUP_CODE_COUNT = 10;

// Crockford's Base32: no I, L, O or U, so codes read aloud or typed from paper are not misread.
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const LENGTH = 10;
const NORMALISED = /^[0-9A-HJKMNP-TV-Z]{10}$/;

/** A fresh set of single-use backup codes, shown to the user once as `XXXXX-XXXXX` (50 random bits each). */
export function newBackupCodes(count = BACKUP_CODE_COUNT): string[] {
  const codes = new Set<string>();
  while (codes.size < count) {
    let code = '';
    for (let i = 0; i < LENGTH; i += 1) code += ALPHABET[randomInt(ALPHABET.length)];
    codes.add(`${code.slice(0, 5)}-${code.slice(5)}`);
  }
  return [...codes];
}

/**
 * The canonical form of a typed backup code (case, hyphens and spaces ignored; O read as 0, I and L as 1), or
 * undefined when it cannot be one.
 */
export function normaliseBackupCode(input: string): string | undefined {
  const code = input.toUpperCase().replace(/[\s-]/g, '').replace(/O/g, '0').replace(/[IL]/g, '1');
  return NORMALISED.test(code) ? code : undefined;
}

/** What is stored: the SHA-256 of the canonical form (the codes are random, so no slow hash is needed). */
export function hashBackupCode(input: string): string | undefined {
  const code = normaliseBackupCode(input);
  return code === undefined ? undefined : sha256Hex(code);
}
