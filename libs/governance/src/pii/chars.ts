/**
 * Character-code helpers of the scanners: no allocation, no regular expression. Offsets are UTF-16 code units.
 */

export const CH_SPACE = 0x20;
export const CH_PLUS = 0x2b;
export const CH_COMMA = 0x2c;
export const CH_DASH = 0x2d;
export const CH_DOT = 0x2e;
export const CH_SLASH = 0x2f;
export const CH_COLON = 0x3a;
export const CH_AT = 0x40;
export const CH_OPEN = 0x28;
export const CH_CLOSE = 0x29;
export const CH_UNDERSCORE = 0x5f;

export function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

export function isUpper(c: number): boolean {
  return c >= 65 && c <= 90;
}

export function isLower(c: number): boolean {
  return c >= 97 && c <= 122;
}

export function isAsciiLetter(c: number): boolean {
  return (c | 0x20) >= 97 && (c | 0x20) <= 122;
}

export function isAsciiAlnum(c: number): boolean {
  return (c >= 48 && c <= 57) || ((c | 0x20) >= 97 && (c | 0x20) <= 122);
}

export function isHex(c: number): boolean {
  return (c >= 48 && c <= 57) || ((c | 0x20) >= 97 && (c | 0x20) <= 102);
}

/** ASCII upper case of a letter's code (other codes unchanged). */
export function upper(c: number): number {
  return c >= 97 && c <= 122 ? c - 32 : c;
}

/**
 * A character that continues a word: ASCII letters, digits and `_`, and non-ASCII letters (approximated by code
 * ranges: Latin-1 letters, then everything outside the punctuation, symbol and space blocks). A value glued to one is
 * part of a longer token and is not taken.
 */
export function isWordChar(c: number): boolean {
  if (c < 0x80) return isAsciiAlnum(c) || c === CH_UNDERSCORE;
  if (c < 0xc0) return c === 0xaa || c === 0xb5 || c === 0xba;
  if (c === 0xd7 || c === 0xf7) return false;
  if (c >= 0x2000 && c <= 0x2bff) return false; // punctuation, symbols, arrows, box drawing
  if (c >= 0x3000 && c <= 0x303f) return false; // CJK punctuation
  if (c >= 0xfe30 && c <= 0xfe4f) return false;
  if (c >= 0xd800 && c <= 0xdfff) return false; // surrogates: emoji and the like
  return true;
}

/** The code at `i`, or -1 outside the text. */
export function codeAt(text: string, i: number): number {
  return i >= 0 && i < text.length ? text.charCodeAt(i) : -1;
}

/** A separator that may join the groups of a printed number. */
export function isJoiner(c: number): boolean {
  return c === CH_SPACE || c === CH_DASH || c === CH_DOT || c === CH_SLASH;
}

/**
 * Whether a value may start at `start`: the character before is not a word character, and is not a joiner (or other
 * punctuation that glues numbers: `-./:,_`) itself glued to a digit, as in `1.2.3.4.5` or `2026-11-27`.
 */
export function leftClear(text: string, start: number): boolean {
  const c = codeAt(text, start - 1);
  if (c < 0) return true;
  if (isWordChar(c)) return false;
  if (c === CH_SPACE || c === CH_DASH || c === CH_DOT || c === CH_SLASH || c === CH_COLON || c === CH_COMMA) {
    return !isDigit(codeAt(text, start - 2));
  }
  return c !== CH_AT && c !== CH_PLUS;
}

/** Whether a value may end at `end` (exclusive): the mirror of `leftClear`. */
export function rightClear(text: string, end: number): boolean {
  const c = codeAt(text, end);
  if (c < 0) return true;
  if (isWordChar(c)) return false;
  if (c === CH_SPACE || c === CH_DASH || c === CH_DOT || c === CH_SLASH || c === CH_COLON || c === CH_COMMA) {
    return !isDigit(codeAt(text, end + 1));
  }
  return c !== CH_AT;
}
