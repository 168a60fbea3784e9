import type { JsonShapeLimits } from './body-parser.js';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

/** Why a text was refused by scanJsonShape, or undefined when its shape is within the limits. */
export type ShapeRefusal = 'depth' | 'objectKeys' | 'totalKeys' | undefined;

/**
 * Counts the keys and array items of JSON text before it is parsed, so that a body of a million tiny values is
 * refused for a few milliseconds of scanning instead of costing a parse that builds a million objects. It reads
 * structure only (strings are skipped, nothing is validated: malformed text is left to the parser) and counts
 * exactly: a non-empty container holds one more value than it has commas. Limits and meanings are those of
 * assertSafeJson, which still checks the parsed value.
 */
export function scanJsonShape(text: string, limits: JsonShapeLimits, maxDepth: number): ShapeRefusal {
  // Per open container: whether it is an object, and how many values it holds so far.
  const isObject: boolean[] = [];
  const counts: number[] = [];
  let depth = 0;
  let total = 0;
  // Set after `{` or `[`: the next significant character says whether the container is empty.
  let opened = false;
  const length = text.length;
  for (let i = 0; i < length; i += 1) {
    const c = text.charCodeAt(i);
    if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) continue;
    if (opened) {
      opened = false;
      if (c !== CLOSE_OBJECT && c !== CLOSE_ARRAY) {
        counts[depth - 1] = 1;
        total += 1;
      }
    }
    if (c === QUOTE) {
      i = endOfString(text, i);
      continue;
    }
    if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (depth >= maxDepth) return 'depth';
      isObject[depth] = c === OPEN_OBJECT;
      counts[depth] = 0;
      depth += 1;
      opened = true;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      if (depth > 0) depth -= 1;
    } else if (c === COMMA && depth > 0) {
      const n = (counts[depth - 1] ?? 0) + 1;
      counts[depth - 1] = n;
      total += 1;
      if (isObject[depth - 1] && n > limits.maxObjectKeys) return 'objectKeys';
    } else {
      continue;
    }
    if (total > limits.maxTotalKeys) return 'totalKeys';
  }
  return undefined;
}

/** Index of the quote that closes the string opened at `start` (the text's end when it is unterminated). */
function endOfString(text: string, start: number): number {
  let i = start;
  for (;;) {
    i = text.indexOf('"', i + 1);
    if (i === -1) return text.length;
    let backslashes = 0;
    for (let j = i - 1; text.charCodeAt(j) === BACKSLASH; j -= 1) backslashes += 1;
    if (backslashes % 2 === 0) return i;
  }
}
