import { ScimFilterError } from './ast.js';

/** The lexer: the filter's text to tokens in one pass, no backtracking, no regular expression. */

export type Token =
  | { t: 'word'; text: string; pos: number }
  | { t: 'string'; value: string; pos: number }
  | { t: 'number'; value: number; pos: number }
  | { t: '(' | ')' | '[' | ']' | 'end'; pos: number };

export const isAlpha = (c: number) => (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
export const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
const isHexDigit = (c: number) => isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
/** A character of an attribute path, keyword or schema URN: ALPHA DIGIT - _ $ : . */
const isWordChar = (c: number) =>
  isAlpha(c) || isDigit(c) || c === 0x2d || c === 0x5f || c === 0x24 || c === 0x3a || c === 0x2e;
const isSpace = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
const isHighSurrogate = (c: number) => c >= 0xd800 && c <= 0xdbff;
const isLowSurrogate = (c: number) => c >= 0xdc00 && c <= 0xdfff;

/** Splits the filter into tokens in one pass. */
export function tokenize(input: string): Token[] {
  const tokens: Token[] = [];
  const n = input.length;
  let i = 0;
  while (i < n) {
    const c = input.charCodeAt(i);
    if (isSpace(c)) {
      i++;
    } else if (c === 0x28 || c === 0x29 || c === 0x5b || c === 0x5d) {
      tokens.push({ t: input[i] as '(' | ')' | '[' | ']', pos: i });
      i++;
    } else if (c === 0x22) {
      i = readString(input, i, tokens);
    } else if (c === 0x2d || isDigit(c)) {
      i = readNumber(input, i, tokens);
    } else if (c === 0x2e && tokens.at(-1)?.t === ']' && i + 1 < n && isAlpha(input.charCodeAt(i + 1))) {
      // `emails[type eq "work"].value`: a sub-attribute right after a value filter (Entra ID writes filters so).
      const start = i;
      i++;
      while (i < n && isWordChar(input.charCodeAt(i))) i++;
      tokens.push({ t: 'word', text: input.slice(start, i), pos: start });
    } else if (isAlpha(c)) {
      const start = i;
      while (i < n && isWordChar(input.charCodeAt(i))) i++;
      tokens.push({ t: 'word', text: input.slice(start, i), pos: start });
    } else {
      throw new ScimFilterError('Unexpected character', i);
    }
  }
  tokens.push({ t: 'end', pos: n });
  return tokens;
}

/** A JSON string starting at the quote at `start`; returns the index after the closing quote. */
function readString(input: string, start: number, tokens: Token[]): number {
  const n = input.length;
  let out = '';
  let i = start + 1;
  let chunk = i;
  while (true) {
    if (i >= n) throw new ScimFilterError('Unterminated string', start);
    const c = input.charCodeAt(i);
    if (c === 0x22) {
      out += input.slice(chunk, i);
      tokens.push({ t: 'string', value: out, pos: start });
      return i + 1;
    }
    if (c < 0x20) throw new ScimFilterError('Control character in a string (escape it)', i);
    if (isHighSurrogate(c)) {
      if (i + 1 >= n || !isLowSurrogate(input.charCodeAt(i + 1))) {
        throw new ScimFilterError('Unpaired surrogate in a string', i);
      }
      i += 2;
      continue;
    }
    if (isLowSurrogate(c)) throw new ScimFilterError('Unpaired surrogate in a string', i);
    if (c !== 0x5c) {
      i++;
      continue;
    }
    out += input.slice(chunk, i);
    if (i + 1 >= n) throw new ScimFilterError('Unterminated string', start);
    const e = input.charCodeAt(i + 1);
    switch (e) {
      case 0x22:
        out += '"';
        break;
      case 0x5c:
        out += '\\';
        break;
      case 0x2f:
        out += '/';
        break;
      case 0x62:
        out += '\b';
        break;
      case 0x66:
        out += '\f';
        break;
      case 0x6e:
        out += '\n';
        break;
      case 0x72:
        out += '\r';
        break;
      case 0x74:
        out += '\t';
        break;
      case 0x75: {
        const unit = readHex4(input, i + 2);
        if (unit === 0) throw new ScimFilterError('A string may not contain \\u0000', i);
        if (isLowSurrogate(unit)) throw new ScimFilterError('Unpaired surrogate escape in a string', i);
        if (isHighSurrogate(unit)) {
          const low =
            input.charCodeAt(i + 6) === 0x5c && input.charCodeAt(i + 7) === 0x75
              ? readHex4(input, i + 8)
              : -1;
          if (!isLowSurrogate(low)) throw new ScimFilterError('Unpaired surrogate escape in a string', i);
          out += String.fromCharCode(unit, low);
          i += 12;
        } else {
          out += String.fromCharCode(unit);
          i += 6;
        }
        chunk = i;
        continue;
      }
      default:
        throw new ScimFilterError('Invalid escape sequence in a string', i);
    }
    i += 2;
    chunk = i;
  }
}

/** The value of the four hex digits of a \u escape, which start at `at`. */
function readHex4(input: string, at: number): number {
  let value = 0;
  for (let k = 0; k < 4; k++) {
    const c = input.charCodeAt(at + k);
    if (!isHexDigit(c)) throw new ScimFilterError('Invalid \\u escape in a string', at - 2);
    value = value * 16 + (isDigit(c) ? c - 0x30 : (c | 0x20) - 0x61 + 10);
  }
  return value;
}

/** A JSON number starting at `start`; returns the index after it. */
function readNumber(input: string, start: number, tokens: Token[]): number {
  const n = input.length;
  let i = start;
  const digits = () => {
    const from = i;
    while (i < n && isDigit(input.charCodeAt(i))) i++;
    if (i === from) throw new ScimFilterError('Invalid number', start);
  };
  if (input.charCodeAt(i) === 0x2d) i++;
  if (input.charCodeAt(i) === 0x30) i++;
  else digits();
  if (input.charCodeAt(i) === 0x2e) {
    i++;
    digits();
  }
  const e = input.charCodeAt(i);
  if (e === 0x65 || e === 0x45) {
    i++;
    const sign = input.charCodeAt(i);
    if (sign === 0x2b || sign === 0x2d) i++;
    digits();
  }
  if (i < n && isWordChar(input.charCodeAt(i))) throw new ScimFilterError('Invalid number', start);
  const value = Number(input.slice(start, i));
  if (!Number.isFinite(value)) throw new ScimFilterError('Number out of range', start);
  tokens.push({ t: 'number', value, pos: start });
  return i;
}
