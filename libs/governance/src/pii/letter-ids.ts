/**
 * National identifiers that start with a letter: the UK National Insurance number, the Spanish NIE and the Italian
 * codice fiscale. Each is read from the start of a token by a bounded scan.
 */
import { CH_DASH, CH_SPACE, codeAt, isDigit, isUpper, isWordChar, rightClear, upper } from './chars.js';
import { dniLetter, fiscalCodeCheckChar } from './checksums.js';
import { ENTITY_BIT } from './entities.js';
import type { Sink } from './sink.js';

/** Two admissible prefix letters, six digits, a suffix A–D: a shape seldom seen otherwise, but no checksum. */
export const NINO_SCORE = 0.6;
export const NIE_SCORE = 0.7;
/** Structure (name letters, birth date, municipality) and a check letter. */
export const FISCAL_CODE_SCORE = 0.9;

/** Letters HMRC never uses first (D, F, I, Q, U, V) or second (also O) in a NINO prefix. */
const NINO_NOT_FIRST = 'DFIQUV';
const NINO_NOT_SECOND = 'DFIOQUV';
const NINO_NOT_PAIRS = ['BG', 'GB', 'KN', 'NK', 'NT', 'TN', 'ZZ'];

/**
 * Whether two letters may prefix a NINO. QQ, the prefix of HMRC's examples (QQ 12 34 56 C), is not admissible: Q is
 * never used, so an example number is not taken for a person's.
 */
export function ninoPrefixValid(prefix: string): boolean {
  if (prefix.length !== 2) return false;
  return (
    !NINO_NOT_FIRST.includes(prefix[0]!) &&
    !NINO_NOT_SECOND.includes(prefix[1]!) &&
    !NINO_NOT_PAIRS.includes(prefix) &&
    isUpper(prefix.charCodeAt(0)) &&
    isUpper(prefix.charCodeAt(1))
  );
}

function startClear(text: string, start: number): boolean {
  const before = codeAt(text, start - 1);
  return before < 0 || !isWordChar(before);
}

/**
 * Detects a NINO at `start`: `AB123456C`, `AB 12 34 56 C` or `AB 123456 C` (upper case, as printed by HMRC).
 */
export function detectNino(text: string, start: number, sink: Sink): void {
  if (!ninoPrefixValid(text.slice(start, start + 2)) || !startClear(text, start)) return;
  let i = start + 2;
  const spaced = text.charCodeAt(i) === CH_SPACE;
  if (spaced) i++;
  let digits = 0;
  while (digits < 6) {
    if (!isDigit(codeAt(text, i))) return;
    digits++;
    i++;
    if (spaced && (digits === 2 || digits === 4) && text.charCodeAt(i) === CH_SPACE) i++;
  }
  if (spaced) {
    if (text.charCodeAt(i) !== CH_SPACE) return;
    i++;
  }
  const suffix = codeAt(text, i);
  if (suffix < 65 || suffix > 68 || !rightClear(text, i + 1)) return;
  const score = sink.score(ENTITY_BIT.ukNino, start, i + 1, NINO_SCORE);
  if (score >= sink.minScore) sink.add('ukNino', start, i + 1, score);
}

function isNieSeparator(c: number): boolean {
  return c === CH_DASH || c === CH_SPACE;
}

/** Detects a NIE at `start`: X, Y or Z, seven digits and the control letter, compact or with `-` or spaces. */
export function detectNie(text: string, start: number, sink: Sink): void {
  const first = text.charCodeAt(start);
  if (first < 88 || first > 90 || !startClear(text, start)) return;
  let i = start + 1;
  if (isNieSeparator(text.charCodeAt(i))) i++;
  let value = first - 88;
  for (let k = 0; k < 7; k++, i++) {
    const c = codeAt(text, i);
    if (!isDigit(c)) return;
    value = value * 10 + c - 48;
  }
  if (isNieSeparator(text.charCodeAt(i))) i++;
  const letter = codeAt(text, i);
  if (!isUpper(upper(letter)) || !rightClear(text, i + 1)) return;
  if (dniLetter(value).charCodeAt(0) !== upper(letter)) return;
  const score = sink.score(ENTITY_BIT.esDni, start, i + 1, NIE_SCORE);
  if (score >= sink.minScore) sink.add('esDni', start, i + 1, score);
}

/** Letters standing for digits in a codice fiscale made unique by omocodia: L=0, M=1, …, V=9. */
const OMOCODIA = 'LMNPQRSTUV';
const MONTHS = 'ABCDEHLMPRST';
/** Positions of the seven digits that omocodia may replace. */
const DIGIT_POSITIONS = [6, 7, 9, 10, 12, 13, 14];

function cfDigit(c: string): number {
  if (c >= '0' && c <= '9') return c.charCodeAt(0) - 48;
  return OMOCODIA.indexOf(c);
}

/**
 * Whether a 16-character upper-case string is a well-formed codice fiscale: six letters (surname, name), year, month
 * letter, day (01–31, or 41–71 for women), a letter and three digits (municipality), the check letter; digits may be
 * replaced by their omocodia letters.
 */
export function fiscalCodeValid(cf: string): boolean {
  if (cf.length !== 16) return false;
  for (let k = 0; k < 16; k++) {
    const c = cf[k]!;
    const isLetter = c >= 'A' && c <= 'Z';
    if (DIGIT_POSITIONS.includes(k)) {
      if (cfDigit(c) < 0) return false;
    } else if (!isLetter) return false;
  }
  if (!MONTHS.includes(cf[8]!)) return false;
  const day = cfDigit(cf[9]!) * 10 + cfDigit(cf[10]!);
  if (!((day >= 1 && day <= 31) || (day >= 41 && day <= 71))) return false;
  return fiscalCodeCheckChar(cf.slice(0, 15)) === cf[15];
}

/** Detects a codice fiscale that is the token `text[start, end)` (upper case, or all lower case). */
export function detectFiscalCode(text: string, start: number, end: number, sink: Sink): void {
  if (end - start !== 16 || !startClear(text, start) || !rightClear(text, end)) return;
  const token = text.slice(start, end);
  const cf = token.toUpperCase();
  if (token !== cf && token !== token.toLowerCase()) return; // camelCase identifiers are not codes
  if (!fiscalCodeValid(cf)) return;
  const score = sink.score(ENTITY_BIT.itFiscalCode, start, end, FISCAL_CODE_SCORE);
  if (score >= sink.minScore) sink.add('itFiscalCode', start, end, score);
}
