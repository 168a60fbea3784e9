/** How deeply objects and arrays may nest in one export line (an entry needs 2, its metadata a few more). */
export const MAX_DEPTH = 512;

/**
 * The exact decimal value of a JSON number token, normalised: sign, significant digits (no leading or trailing
 * zeros) and the exponent of the last digit, so that two tokens have the same value iff their normal forms are equal
 * (`1.0` and `1`, `1e21` and `1000000000000000000000`, `-0` and `0`, `0.000001` and `1e-6`).
 *
 * @param {string} token a JSON number (`-?int(.frac)?([eE][+-]?digits)?`)
 * @returns {string}
 */
export function decimalValue(token) {
  const match = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(token);
  if (!match) return `invalid:${token}`;
  const [, sign, integer, fraction = '', exponent = '0'] = match;
  const all = integer + fraction;
  let start = 0;
  while (start < all.length && all.charCodeAt(start) === 0x30) start += 1;
  let end = all.length;
  while (end > start && all.charCodeAt(end - 1) === 0x30) end -= 1;
  if (start === end) return '0'; // zero, whatever its sign and exponent
  // value = digits × 10^(exponent - fraction.length + trailing zeros dropped). An exponent too large for a double
  // to hold exactly (beyond 2^53) is off by far more than any finite non-zero double's, so the comparison still fails.
  const power = Number(exponent) - fraction.length + (all.length - end);
  return `${sign}${all.slice(start, end)}e${power}`;
}

/**
 * Whether a JSON number token is, as an exact decimal, the double it parses to: the token's value equals the value
 * of `String(Number(token))`, the shortest form of that double (what JSON.stringify and RFC 8785 write). A token
 * that parses to a neighbouring double (`9007199254740993`, `0.10000000000000000001`) or to no finite double
 * (`1e400`) is not: a reader that keeps more precision than a double would see another number.
 *
 * @param {string} token
 * @returns {boolean}
 */
export function isCanonicalNumber(token) {
  const value = Number(token);
  if (!Number.isFinite(value)) return false;
  return decimalValue(token) === decimalValue(String(value));
}

const isNumberStart = (c) => c === 0x2d || (c >= 0x30 && c <= 0x39); // - 0-9
const isNumberChar = (c) => isNumberStart(c) || c === 0x2b || c === 0x2e || c === 0x45 || c === 0x65; // + . E e

/**
 * Checks the text of one JSON value (already accepted by JSON.parse) for what JSON.parse lets through silently:
 * an object with the same key twice (the last one wins, another reader may keep the first), a number literal that
 * is not exactly the double it parses to, and nesting deeper than `MAX_DEPTH`. One linear pass, no recursion.
 *
 * @param {string} text
 * @returns {{reason: 'duplicate_key' | 'non_canonical_number' | 'malformed_line', detail: string} | null}
 */
export function scanJson(text) {
  /** One frame per open object or array: the keys seen so far (objects) and whether a key comes next. */
  const stack = [];
  let top = null;
  const length = text.length;
  let i = 0;
  while (i < length) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // a string: find its closing quote, stepping over each escape (a backslash and the character after it)
      let j = i + 1;
      let escaped = false;
      while (j < length) {
        const d = text.charCodeAt(j);
        if (d === 0x5c) {
          escaped = true;
          j += 2;
        } else if (d === 0x22) break;
        else j += 1;
      }
      if (top !== null && top.keys !== null && top.expectKey) {
        const key = escaped ? JSON.parse(text.slice(i, j + 1)) : text.slice(i + 1, j);
        if (top.keys.has(key)) {
          return {
            reason: 'duplicate_key',
            detail: `the key ${JSON.stringify(key)} appears twice in an object`,
          };
        }
        top.keys.add(key);
        top.expectKey = false;
      }
      i = j + 1;
    } else if (isNumberStart(c)) {
      let j = i + 1;
      while (j < length && isNumberChar(text.charCodeAt(j))) j += 1;
      const token = text.slice(i, j);
      if (!isCanonicalNumber(token)) {
        const value = Number(token);
        const shown = token.length > 80 ? `${token.slice(0, 80)}…` : token;
        return {
          reason: 'non_canonical_number',
          detail: Number.isFinite(value)
            ? `the number ${shown} is not exactly the double it reads as (${String(value)})`
            : `the number ${shown} is beyond the range of a double`,
        };
      }
      i = j;
    } else if (c === 0x7b || c === 0x5b) {
      // { or [
      if (stack.length >= MAX_DEPTH) {
        return { reason: 'malformed_line', detail: `the line nests deeper than ${MAX_DEPTH} levels` };
      }
      top = c === 0x7b ? { keys: new Set(), expectKey: true } : { keys: null, expectKey: false };
      stack.push(top);
      i += 1;
    } else if (c === 0x7d || c === 0x5d) {
      // } or ]
      stack.pop();
      top = stack.length > 0 ? stack[stack.length - 1] : null;
      i += 1;
    } else {
      if (c === 0x2c && top !== null && top.keys !== null) top.expectKey = true; // , in an object
      i += 1;
    }
  }
  return null;
}
