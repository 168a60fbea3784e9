/**
 * IBANs (ISO 13616): a country code with its registered length, two check digits and the BBAN, printed compact or in
 * groups of four joined by single spaces, in either case; the mod-97 check must hold.
 */
import { CH_SPACE, codeAt, isAsciiLetter, isDigit, isWordChar, rightClear, upper } from './chars.js';
import { ENTITY_BIT } from './entities.js';
import type { Sink } from './sink.js';

/** Length, country code included, of the IBANs of each country of the SWIFT IBAN registry (all SEPA and others). */
export const IBAN_LENGTHS: Readonly<Record<string, number>> = {
  AD: 24,
  AE: 23,
  AL: 28,
  AT: 20,
  AZ: 28,
  BA: 20,
  BE: 16,
  BG: 22,
  BH: 22,
  BI: 27,
  BR: 29,
  BY: 28,
  CH: 21,
  CR: 22,
  CY: 28,
  CZ: 24,
  DE: 22,
  DJ: 27,
  DK: 18,
  DO: 28,
  EE: 20,
  EG: 29,
  ES: 24,
  FI: 18,
  FK: 18,
  FO: 18,
  FR: 27,
  GB: 22,
  GE: 22,
  GI: 23,
  GL: 18,
  GR: 27,
  GT: 28,
  HN: 28,
  HR: 21,
  HU: 28,
  IE: 22,
  IL: 23,
  IQ: 23,
  IS: 26,
  IT: 27,
  JO: 30,
  KW: 30,
  KZ: 20,
  LB: 28,
  LC: 32,
  LI: 21,
  LT: 20,
  LU: 20,
  LV: 21,
  LY: 25,
  MC: 27,
  MD: 24,
  ME: 22,
  MK: 19,
  MN: 20,
  MR: 27,
  MT: 31,
  MU: 30,
  NI: 28,
  NL: 18,
  NO: 15,
  OM: 23,
  PK: 24,
  PL: 28,
  PS: 29,
  PT: 25,
  QA: 29,
  RO: 24,
  RS: 22,
  RU: 33,
  SA: 24,
  SC: 31,
  SD: 18,
  SE: 24,
  SI: 19,
  SK: 24,
  SM: 27,
  SO: 23,
  ST: 25,
  SV: 28,
  TL: 23,
  TN: 24,
  TR: 26,
  UA: 29,
  VA: 22,
  VG: 24,
  XK: 20,
  YE: 30,
};

/** Mod 97 leaves one random string in 97: with the registered length and shape, an IBAN beyond reasonable doubt. */
export const IBAN_SCORE = 0.95;
const BIT = ENTITY_BIT.iban;

/** Scratch of the IBAN scan: the value (0–35) of each character read. */
const CHARS = new Uint8Array(34);

/** Detects an IBAN whose country code starts at `start` (the start of a token: two letters, two digits). */
export function detectIban(text: string, start: number, sink: Sink): void {
  const n = text.length;
  if (start + 4 > n) return;
  const c0 = text.charCodeAt(start);
  const c1 = text.charCodeAt(start + 1);
  if (!isAsciiLetter(c0) || !isAsciiLetter(c1)) return;
  if (!isDigit(text.charCodeAt(start + 2)) || !isDigit(text.charCodeAt(start + 3))) return;
  const before = codeAt(text, start - 1);
  if (before >= 0 && isWordChar(before)) return;
  const length = IBAN_LENGTHS[String.fromCharCode(upper(c0), upper(c1))];
  if (length === undefined) return;
  // Compact, or spaced: a single space after every fourth character.
  const spaced = text.charCodeAt(start + 4) === CH_SPACE;
  let count = 0;
  let i = start;
  while (count < length) {
    if (spaced && count > 0 && count % 4 === 0) {
      if (i >= n || text.charCodeAt(i) !== CH_SPACE) return;
      i++;
    }
    if (i >= n) return;
    const c = text.charCodeAt(i);
    if (isDigit(c)) CHARS[count++] = c - 48;
    else if (isAsciiLetter(c)) CHARS[count++] = upper(c) - 55;
    else return;
    i++;
  }
  if (!rightClear(text, i)) return;
  // ISO 13616: the first four characters moved to the end, letters as 10–35, the number mod 97 equal to 1.
  let r = 0;
  for (let k = 0; k < length; k++) {
    const v = CHARS[(k + 4) % length]!;
    r = v < 10 ? (r * 10 + v) % 97 : (r * 100 + v) % 97;
  }
  if (r !== 1) return;
  const score = sink.score(BIT, start, i, IBAN_SCORE);
  if (score >= sink.minScore) sink.add('iban', start, i, score);
}
