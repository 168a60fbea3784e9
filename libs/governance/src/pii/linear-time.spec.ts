import { describe, expect, it } from 'vitest';
import { detectPii, piiTypesIn } from './detect.js';
import { PII_ENTITIES } from './entities.js';
import { maskText } from './mask.js';

const ALL = new Set(PII_ENTITIES);
const MB = 1_000_000;

/** `unit` repeated to one megabyte. */
const megabyte = (unit: string) => unit.repeat(Math.ceil(MB / unit.length)).slice(0, MB);

/**
 * Inputs that make a naive scanner backtrack or rescan: long digit runs, `@` chains, dotted and colon chains,
 * digit groups, and the starts of every identifier repeated. Each must come back (no timing assertion here: the
 * benchmark measures speed; this only shows there is no super-linear blow-up, within a generous timeout).
 */
const ADVERSARIAL: Record<string, string> = {
  digits: megabyte('1'),
  'digit groups': megabyte('1 '),
  'card groups': megabyte('4111 '),
  'dashed groups': megabyte('12-'),
  'at signs': megabyte('aaaa@'),
  domains: megabyte('a@a.'),
  'local part': `${'a'.repeat(MB - 10)}@b.de`,
  'dotted numbers': megabyte('1.1.1.1.'),
  colons: megabyte(':'),
  'ipv6 chains': megabyte('1::'),
  'hex groups': megabyte('fe80:'),
  'phone starts': megabyte('+1 ('),
  parentheses: megabyte('(0)'),
  'iban starts': megabyte('DE89 '),
  'nino starts': megabyte('AB 12 '),
  'nie starts': megabyte('X-1'),
  'fiscal codes': megabyte('RSSMRA85T10A562S'),
  'nir starts': megabyte('1 8'),
  'label words': megabyte('telefon '),
  'letters then digits': `${'a'.repeat(MB / 2)}${'1'.repeat(MB / 2)}`,
  // A token after a number is read again when the run from that number found nothing.
  'digit pairs': megabyte('12 34 56 '),
  years: megabyte('2024 '),
  'times then groups': megabyte('10:42 '),
  'times then cards': megabyte('10:42 4111 1111 1111 1112 '),
  'restarted long runs': megabyte('1:2 3456 7890 1234 5678 9012 3456 '),
  'comma lists': megabyte('1,0612345678,'),
  // Phone numbers, each validated against numbering plans: repeated, then distinct.
  'phone runs': megabyte('099 9999999 '),
  'phone lines': megabyte('099 9999999\n'),
  'labelled phone lines': megabyte('Tel 099 9999999\n'),
  'distinct phone lines': Array.from(
    { length: MB / 13 },
    (_, i) => `0${100 + (i % 900)} ${1_000_000 + ((i * 7_919) % 9_000_000)}\n`,
  ).join(''),
};

describe('linear time on adversarial input', () => {
  it.each(Object.keys(ADVERSARIAL))(
    'returns on a megabyte of %s',
    (name) => {
      const text = ADVERSARIAL[name]!;
      const matches = detectPii(text, ALL);
      expect(Array.isArray(matches)).toBe(true);
      expect(piiTypesIn(text, ALL).length).toBeLessThanOrEqual(PII_ENTITIES.length);
      expect(typeof maskText(text, { entities: ALL, mode: 'redact', key: new Uint8Array(16) }, {})).toBe(
        'string',
      );
    },
    120_000,
  );

  it('still finds the values of a repeated valid one', () => {
    const text = 'a@b.de '.repeat(10_000);
    expect(detectPii(text, new Set(['email']))).toHaveLength(10_000);
  });
});
