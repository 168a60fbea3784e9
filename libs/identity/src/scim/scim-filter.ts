import { type SQL, sql } from 'drizzle-orm';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';

/**
 * The SCIM 2.0 filter language (RFC 7644 §3.4.2.2): a hand-written lexer and recursive-descent parser (one pass over
 * the input, no backtracking, no regular expression), a compiler to Drizzle SQL in which every value is a bound
 * parameter, and an in-memory evaluator with the same semantics.
 */

/** The parser's limits: a filter beyond any of them is refused before anything else is done with it. */
export const SCIM_FILTER_LIMITS = { maxLength: 4096, maxDepth: 32, maxComparisons: 100 } as const;

/**
 * Every refusal of a filter, from parsing, compiling or a hand-built node: the caller answers 400 with scimType
 * `invalidFilter`. `position` is the 0-based offset in the filter text where one is known.
 */
export class ScimFilterError extends Error {
  readonly scimType = 'invalidFilter';

  constructor(
    message: string,
    readonly position?: number,
  ) {
    super(position === undefined ? message : `${message} (at character ${position + 1})`);
    this.name = 'ScimFilterError';
  }
}

/** A comparison operator of the filter language (`pr` is a node of its own). */
export type ScimCompareOperator = 'eq' | 'ne' | 'co' | 'sw' | 'ew' | 'gt' | 'ge' | 'lt' | 'le';

/** A compValue: a JSON literal, number or string (already unescaped). */
export type ScimFilterValue = string | number | boolean | null;

/**
 * A parsed filter. `attr` is the lower-case attribute path without its schema URN (`name.givenname`); inside a
 * `valuePath` the inner filter's attributes are relative to `attr` (`emails[value eq "x"]` holds `value`).
 */
export type FilterNode =
  | { kind: 'compare'; attr: string; op: ScimCompareOperator; value: ScimFilterValue }
  | { kind: 'present'; attr: string }
  | { kind: 'and'; left: FilterNode; right: FilterNode }
  | { kind: 'or'; left: FilterNode; right: FilterNode }
  | { kind: 'not'; filter: FilterNode }
  | { kind: 'valuePath'; attr: string; filter: FilterNode };

/** How one filterable attribute maps to the database: its column (or expression), SCIM type and case sensitivity. */
export interface ScimAttribute {
  column: SQL | AnyPgColumn;
  type: 'string' | 'boolean' | 'dateTime';
  caseExact: boolean;
}

/** The filterable attributes of a resource, keyed by lower-case attribute path ('username', 'emails.value'). */
export type ScimAttributeMap = Record<string, ScimAttribute>;

const COMPARE_OPERATORS: ReadonlySet<string> = new Set([
  'eq',
  'ne',
  'co',
  'sw',
  'ew',
  'gt',
  'ge',
  'lt',
  'le',
]);

// ---------------------------------------------------------------------------------------------------------------
// Lexer

type Token =
  | { t: 'word'; text: string; pos: number }
  | { t: 'string'; value: string; pos: number }
  | { t: 'number'; value: number; pos: number }
  | { t: '(' | ')' | '[' | ']' | 'end'; pos: number };

const isAlpha = (c: number) => (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
const isHexDigit = (c: number) => isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
/** A character of an attribute path, keyword or schema URN: ALPHA DIGIT - _ $ : . */
const isWordChar = (c: number) =>
  isAlpha(c) || isDigit(c) || c === 0x2d || c === 0x5f || c === 0x24 || c === 0x3a || c === 0x2e;
const isSpace = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
const isHighSurrogate = (c: number) => c >= 0xd800 && c <= 0xdbff;
const isLowSurrogate = (c: number) => c >= 0xdc00 && c <= 0xdfff;

/** Splits the filter into tokens in one pass. */
function tokenize(input: string): Token[] {
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

// ---------------------------------------------------------------------------------------------------------------
// Parser

/** Validates an ATTRNAME (ALPHA *(ALPHA / DIGIT / "-" / "_" / "$")). */
function isAttrName(name: string): boolean {
  if (name.length === 0 || !isAlpha(name.charCodeAt(0))) return false;
  for (let i = 1; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (!(isAlpha(c) || isDigit(c) || c === 0x2d || c === 0x5f || c === 0x24)) return false;
  }
  return true;
}

class Parser {
  private index = 0;
  private depth = 0;
  private comparisons = 0;

  constructor(private readonly tokens: Token[]) {}

  parse(): FilterNode {
    const node = this.filter(null);
    const rest = this.peek();
    if (rest.t !== 'end') {
      throw new ScimFilterError(
        rest.t === ']' || rest.t === ')' ? `Unbalanced '${rest.t}'` : 'Unexpected token',
        rest.pos,
      );
    }
    return node;
  }

  private peek(ahead = 0): Token {
    return this.tokens[Math.min(this.index + ahead, this.tokens.length - 1)]!;
  }

  private next(): Token {
    const token = this.peek();
    if (this.index < this.tokens.length - 1) this.index++;
    return token;
  }

  private isKeyword(token: Token, keyword: string): boolean {
    return token.t === 'word' && token.text.length === keyword.length && token.text.toLowerCase() === keyword;
  }

  private enter(pos: number): void {
    if (++this.depth > SCIM_FILTER_LIMITS.maxDepth) {
      throw new ScimFilterError(`Filter nested deeper than ${SCIM_FILTER_LIMITS.maxDepth} levels`, pos);
    }
  }

  private expect(kind: ')' | ']', opened: Token): void {
    const token = this.next();
    if (token.t !== kind) {
      throw new ScimFilterError(
        token.t === 'end'
          ? `Missing '${kind}' for the '${opened.t}' at character ${opened.pos + 1}`
          : `Expected '${kind}'`,
        token.pos,
      );
    }
    this.depth--;
  }

  /** FILTER with `or` (lowest precedence, left-associative). `parent` is set inside a valuePath's brackets. */
  private filter(parent: string | null): FilterNode {
    let left = this.conjunction(parent);
    while (this.isKeyword(this.peek(), 'or')) {
      this.next();
      left = { kind: 'or', left, right: this.conjunction(parent) };
    }
    return left;
  }

  private conjunction(parent: string | null): FilterNode {
    let left = this.unary(parent);
    while (this.isKeyword(this.peek(), 'and')) {
      this.next();
      left = { kind: 'and', left, right: this.unary(parent) };
    }
    return left;
  }

  private unary(parent: string | null): FilterNode {
    const token = this.peek();
    if (token.t === '(') {
      this.next();
      this.enter(token.pos);
      const inner = this.filter(parent);
      this.expect(')', token);
      return inner;
    }
    if (this.isKeyword(token, 'not')) {
      const after = this.peek(1);
      if (after.t === '(') {
        this.next();
        this.next();
        this.enter(after.pos);
        const inner = this.filter(parent);
        this.expect(')', after);
        return { kind: 'not', filter: inner };
      }
      // `not` is an attribute name only when an operator follows it (`not pr`); otherwise it is a misplaced `not`.
      if (!(
        after.t === 'word' &&
        (COMPARE_OPERATORS.has(after.text.toLowerCase()) || this.isKeyword(after, 'pr'))
      )) {
        throw new ScimFilterError("'not' must be followed by a parenthesised filter: not (...)", token.pos);
      }
    }
    if (token.t === 'word') return this.attributeExpression(parent);
    throw new ScimFilterError(
      token.t === 'end'
        ? 'Filter ends where an attribute was expected'
        : "Expected an attribute, '(' or 'not'",
      token.pos,
    );
  }

  private attributeExpression(parent: string | null): FilterNode {
    const token = this.next() as Extract<Token, { t: 'word' }>;
    const attr = this.attributePath(token, parent !== null);
    const opToken = this.peek();
    if (opToken.t === '[') {
      if (parent !== null) throw new ScimFilterError('Value filters cannot be nested', opToken.pos);
      if (attr.includes('.')) {
        throw new ScimFilterError('A value filter applies to an attribute, not a sub-attribute', token.pos);
      }
      this.next();
      this.enter(opToken.pos);
      const inner = this.filter(attr);
      this.expect(']', opToken);
      const sub = this.peek();
      if (sub.t === 'word' && sub.text.startsWith('.')) {
        // `emails[type eq "work"].value eq "x"`: the sub-attribute's test joins the bracket's, on the same element.
        this.next();
        const name = sub.text.slice(1).toLowerCase();
        for (let k = 0; k < name.length; k++) {
          const ch = name.charCodeAt(k);
          if (!(isAlpha(ch) || isDigit(ch) || ch === 0x2d || ch === 0x5f || ch === 0x24)) {
            throw new ScimFilterError('Malformed sub-attribute', sub.pos);
          }
        }
        const test = this.comparison(sub, name);
        return { kind: 'valuePath', attr, filter: { kind: 'and', left: inner, right: test } };
      }
      return { kind: 'valuePath', attr, filter: inner };
    }
    return this.comparison(token, attr);
  }

  /** The operator and value after an attribute path (`token` is where the path was written). */
  private comparison(token: Token, attr: string): FilterNode {
    const opToken = this.peek();
    if (opToken.t !== 'word') {
      throw new ScimFilterError(
        opToken.t === 'end' ? 'Filter ends where an operator was expected' : 'Expected an operator',
        opToken.pos,
      );
    }
    this.next();
    const op = opToken.text.toLowerCase();
    if (op === 'pr') {
      const after = this.peek();
      if (
        after.t === 'string' ||
        after.t === 'number' ||
        this.isKeyword(after, 'true') ||
        this.isKeyword(after, 'false') ||
        this.isKeyword(after, 'null')
      ) {
        throw new ScimFilterError("'pr' takes no value", after.pos);
      }
      this.count(token.pos);
      return { kind: 'present', attr };
    }
    if (!COMPARE_OPERATORS.has(op)) throw new ScimFilterError('Unknown operator', opToken.pos);
    const value = this.compValue();
    this.count(token.pos);
    return { kind: 'compare', attr, op: op as ScimCompareOperator, value };
  }

  private compValue(): ScimFilterValue {
    const token = this.next();
    if (token.t === 'string' || token.t === 'number') return token.value;
    if (this.isKeyword(token, 'true')) return true;
    if (this.isKeyword(token, 'false')) return false;
    if (this.isKeyword(token, 'null')) return null;
    throw new ScimFilterError(
      token.t === 'end'
        ? 'Filter ends where a value was expected'
        : 'Expected a value: a "string", a number, true, false or null',
      token.pos,
    );
  }

  private count(pos: number): void {
    if (++this.comparisons > SCIM_FILTER_LIMITS.maxComparisons) {
      throw new ScimFilterError(
        `More than ${SCIM_FILTER_LIMITS.maxComparisons} comparisons in a filter`,
        pos,
      );
    }
  }

  /** attrPath = [URI ":"] ATTRNAME *1subAttr, lower-cased without its URN; inside brackets a bare ATTRNAME. */
  private attributePath(token: Extract<Token, { t: 'word' }>, inValuePath: boolean): string {
    let path = token.text;
    const colon = path.lastIndexOf(':');
    if (colon >= 0) {
      if (inValuePath)
        throw new ScimFilterError('A schema URN is not allowed inside a value filter', token.pos);
      const urn = path.slice(0, colon).toLowerCase();
      if (urn.length <= 4 || !urn.startsWith('urn:'))
        throw new ScimFilterError('Invalid schema URN', token.pos);
      path = path.slice(colon + 1);
    }
    const dot = path.indexOf('.');
    const name = dot < 0 ? path : path.slice(0, dot);
    const sub = dot < 0 ? null : path.slice(dot + 1);
    if (!isAttrName(name) || (sub !== null && !isAttrName(sub))) {
      throw new ScimFilterError('Invalid attribute path', token.pos);
    }
    if (sub !== null && inValuePath) {
      throw new ScimFilterError('A value filter compares sub-attributes by their bare name', token.pos);
    }
    return path.toLowerCase();
  }
}

/** Parses a SCIM filter into its tree; anything not in the grammar or beyond the limits is a ScimFilterError. */
export function parseScimFilter(input: string): FilterNode {
  if (typeof input !== 'string') throw new ScimFilterError('The filter must be a string');
  if (input.length > SCIM_FILTER_LIMITS.maxLength) {
    throw new ScimFilterError(`The filter is longer than ${SCIM_FILTER_LIMITS.maxLength} characters`);
  }
  const tokens = tokenize(input);
  if (tokens.length === 1) throw new ScimFilterError('The filter is empty');
  return new Parser(tokens).parse();
}

// ---------------------------------------------------------------------------------------------------------------
// Values shared by the compiler and the evaluator

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * An ISO 8601 / xsd:dateTime string, `YYYY-MM-DDThh:mm:ss[.fraction][Z|±hh:mm]` (no zone means UTC), as a Date at
 * millisecond precision (further digits are dropped); null if it is not one or falls outside years 1-9999.
 */
function parseDateTime(text: string): Date | null {
  const num = (from: number, length: number): number => {
    let value = 0;
    for (let k = from; k < from + length; k++) {
      const c = text.charCodeAt(k);
      if (!isDigit(c)) return -1;
      value = value * 10 + (c - 0x30);
    }
    return value;
  };
  const at = (k: number, ch: string) => text[k] === ch;
  if (
    text.length < 19 ||
    !at(4, '-') ||
    !at(7, '-') ||
    !(at(10, 'T') || at(10, 't')) ||
    !at(13, ':') ||
    !at(16, ':')
  ) {
    return null;
  }
  const year = num(0, 4);
  const month = num(5, 2);
  const day = num(8, 2);
  const hour = num(11, 2);
  const minute = num(14, 2);
  const second = num(17, 2);
  if (year < 1 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23 || minute < 0 || minute > 59)
    return null;
  if (second < 0 || second > 59) return null;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  if (day > (month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1]!)) return null;
  let i = 19;
  let millis = 0;
  if (at(i, '.')) {
    i++;
    const from = i;
    while (i < text.length && isDigit(text.charCodeAt(i))) i++;
    if (i === from) return null;
    const digits = text.slice(from, Math.min(i, from + 3));
    millis = Number(digits.padEnd(3, '0'));
  }
  // The zone: none or Z is UTC, otherwise ±hh:mm.
  let offset = 0;
  const utc = i === text.length || ((at(i, 'Z') || at(i, 'z')) && i + 1 === text.length);
  if (!utc) {
    if (!((at(i, '+') || at(i, '-')) && i + 6 === text.length && at(i + 3, ':'))) return null;
    const oh = num(i + 1, 2);
    const om = num(i + 4, 2);
    if (oh < 0 || oh > 23 || om < 0 || om > 59) return null;
    offset = (at(i, '-') ? -1 : 1) * (oh * 60 + om);
  }
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, millis);
  date.setTime(date.getTime() - offset * 60_000);
  const utcYear = date.getUTCFullYear();
  return utcYear >= 1 && utcYear <= 9999 ? date : null;
}

/**
 * Lower case one code point at a time with the simple (one-to-one) mapping, as PostgreSQL's lower() does: no
 * context-dependent final sigma, and 'İ' becomes 'i' rather than 'i̇'.
 */
function foldCase(text: string): string {
  let ascii = true;
  for (let i = 0; i < text.length; i++) {
    if (text.charCodeAt(i) > 0x7f) {
      ascii = false;
      break;
    }
  }
  if (ascii) return text.toLowerCase();
  let out = '';
  for (const ch of text) {
    const lower = ch.toLowerCase();
    out += lower.length === ch.length ? lower : String.fromCodePoint(lower.codePointAt(0)!);
  }
  return out;
}

/** Code-point (UTF-8 byte) order, as PostgreSQL's "C" collation compares. */
function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    const xs = x >= 0xd800 && x <= 0xdfff;
    const ys = y >= 0xd800 && y <= 0xdfff;
    if (xs !== ys) return xs ? 1 : -1;
    return x - y;
  }
  return a.length - b.length;
}

/** A LIKE pattern matching `value` literally (with `\` as the escape character), for co, sw and ew. */
function likePattern(op: 'co' | 'sw' | 'ew', value: string): string {
  let escaped = '';
  for (const ch of value) escaped += ch === '\\' || ch === '%' || ch === '_' ? `\\${ch}` : ch;
  return op === 'sw' ? `${escaped}%` : op === 'ew' ? `%${escaped}` : `%${escaped}%`;
}

// ---------------------------------------------------------------------------------------------------------------
// Compiler

function lookup(attributes: ScimAttributeMap, path: string): ScimAttribute | undefined {
  return Object.hasOwn(attributes, path) ? attributes[path] : undefined;
}

/**
 * Compiles a parsed filter to a WHERE condition over the columns of `attributes`. Every value is a bound parameter:
 * the SQL text holds only the map's columns, fixed keywords and `$n`. The condition is never NULL (`not` and `ne`
 * behave as in memory when a column is null). An unknown attribute or a value of the wrong type is a ScimFilterError.
 */
export function compileScimFilter(node: FilterNode, attributes: ScimAttributeMap): SQL {
  return compileNode(node, attributes, '', 0);
}

function compileNode(node: FilterNode, attributes: ScimAttributeMap, prefix: string, depth: number): SQL {
  if (depth > 4 * (SCIM_FILTER_LIMITS.maxDepth + SCIM_FILTER_LIMITS.maxComparisons)) {
    throw new ScimFilterError('Filter nested too deeply');
  }
  switch (node?.kind) {
    case 'and':
    case 'or': {
      const left = compileNode(node.left, attributes, prefix, depth + 1);
      const right = compileNode(node.right, attributes, prefix, depth + 1);
      return node.kind === 'and' ? sql`(${left} and ${right})` : sql`(${left} or ${right})`;
    }
    case 'not':
      return sql`(not ${compileNode(node.filter, attributes, prefix, depth + 1)})`;
    case 'valuePath':
      return compileNode(node.filter, attributes, `${prefix}${node.attr}.`, depth + 1);
    case 'present': {
      const attribute = resolve(attributes, prefix, node.attr);
      return present(attribute);
    }
    case 'compare':
      return compileComparison(
        resolve(attributes, prefix, node.attr),
        `${prefix}${node.attr}`,
        node.op,
        node.value,
      );
    default:
      throw new ScimFilterError('Unsupported filter node');
  }
}

function resolve(attributes: ScimAttributeMap, prefix: string, attr: string): ScimAttribute {
  const path = `${prefix}${attr}`;
  const attribute = typeof attr === 'string' ? lookup(attributes, path) : undefined;
  if (!attribute) throw new ScimFilterError(`Unknown or unfilterable attribute '${path}'`);
  return attribute;
}

function present(attribute: ScimAttribute): SQL {
  const column = attribute.column;
  return attribute.type === 'string'
    ? sql`(${column} is not null and ${column} <> '')`
    : sql`(${column} is not null)`;
}

function compileComparison(
  attribute: ScimAttribute,
  path: string,
  op: ScimCompareOperator,
  value: ScimFilterValue,
): SQL {
  const column = attribute.column;
  if (value === null) {
    if (op === 'eq') return sql`(not ${present(attribute)})`;
    if (op === 'ne') return present(attribute);
    throw new ScimFilterError(`'${op}' cannot compare '${path}' with null (only eq and ne can)`);
  }
  switch (attribute.type) {
    case 'boolean': {
      if (typeof value !== 'boolean')
        throw new ScimFilterError(`'${path}' is a boolean: compare it with true or false`);
      if (op === 'eq') return value ? sql`(${column} is true)` : sql`(${column} is false)`;
      if (op === 'ne') return value ? sql`(${column} is not true)` : sql`(${column} is not false)`;
      throw new ScimFilterError(`'${op}' is not supported on the boolean '${path}' (only eq, ne and pr are)`);
    }
    case 'string': {
      if (typeof value !== 'string')
        throw new ScimFilterError(`'${path}' is a string: compare it with a "string"`);
      const left = attribute.caseExact ? sql`${column}` : sql`lower(${column})`;
      const bind = (text: string) => (attribute.caseExact ? sql`${text}::text` : sql`lower(${text}::text)`);
      switch (op) {
        case 'eq':
          return sql`(${column} is not null and ${left} = ${bind(value)})`;
        case 'ne':
          return sql`(${left} is distinct from ${bind(value)})`;
        case 'co':
        case 'sw':
        case 'ew':
          return sql`(${column} is not null and ${left} like ${bind(likePattern(op, value))} escape '\\')`;
        case 'gt':
          return sql`(${column} is not null and ${left} collate "C" > ${bind(value)})`;
        case 'ge':
          return sql`(${column} is not null and ${left} collate "C" >= ${bind(value)})`;
        case 'lt':
          return sql`(${column} is not null and ${left} collate "C" < ${bind(value)})`;
        case 'le':
          return sql`(${column} is not null and ${left} collate "C" <= ${bind(value)})`;
      }
      break;
    }
    case 'dateTime': {
      const date = typeof value === 'string' ? parseDateTime(value) : null;
      if (!date)
        throw new ScimFilterError(`'${path}' is a dateTime: compare it with an ISO 8601 date-time string`);
      const at = sql`${date.toISOString()}::timestamptz`;
      switch (op) {
        case 'eq':
          return sql`(${column} is not null and ${column} = ${at})`;
        case 'ne':
          return sql`(${column} is distinct from ${at})`;
        case 'gt':
          return sql`(${column} is not null and ${column} > ${at})`;
        case 'ge':
          return sql`(${column} is not null and ${column} >= ${at})`;
        case 'lt':
          return sql`(${column} is not null and ${column} < ${at})`;
        case 'le':
          return sql`(${column} is not null and ${column} <= ${at})`;
        case 'co':
        case 'sw':
        case 'ew':
          throw new ScimFilterError(`'${op}' is not supported on the dateTime '${path}'`);
      }
      break;
    }
  }
  throw new ScimFilterError(`'${op}' is not supported on '${path}'`);
}

// ---------------------------------------------------------------------------------------------------------------
// In-memory evaluation

type Getter = (path: string) => unknown;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);

/** A record's value at a lower-case relative path, matching its keys case-insensitively. */
function recordGetter(record: Record<string, unknown>): Getter {
  return (path) => {
    let current: unknown = record;
    for (const segment of path.split('.')) {
      if (!isRecord(current)) return undefined;
      const key = Object.keys(current).find((k) => k.toLowerCase() === segment);
      current = key === undefined ? undefined : current[key];
    }
    return current;
  };
}

/** The values of an attribute: a multi-valued one's elements, a single one as one element, none if absent. */
function valuesOf(value: unknown): unknown[] {
  if (Array.isArray(value)) return value.filter((v) => v !== null && v !== undefined);
  return value === null || value === undefined ? [] : [value];
}

const isPresent = (value: unknown) => value !== null && value !== undefined && value !== '';

/**
 * Evaluates a parsed filter against one resource in memory, with the semantics of `compileScimFilter`. `get` returns
 * the value at a lower-case attribute path (string, boolean, Date, null/undefined, or an array of those for a
 * multi-valued attribute, which matches when any element does; for a valuePath it may also return the complex
 * values as records). `attributes`, when given, supplies caseExact and dateTime types; without it strings compare
 * case-insensitively. A comparison of mismatched types is false, never an error.
 */
export function matchesScimFilter(
  node: FilterNode,
  get: (path: string) => unknown,
  attributes?: ScimAttributeMap,
): boolean {
  return evaluate(node, get, '', attributes ?? {}, 0);
}

function evaluate(
  node: FilterNode,
  get: Getter,
  prefix: string,
  attributes: ScimAttributeMap,
  depth: number,
): boolean {
  if (depth > 4 * (SCIM_FILTER_LIMITS.maxDepth + SCIM_FILTER_LIMITS.maxComparisons)) return false;
  switch (node?.kind) {
    case 'and':
      return (
        evaluate(node.left, get, prefix, attributes, depth + 1) &&
        evaluate(node.right, get, prefix, attributes, depth + 1)
      );
    case 'or':
      return (
        evaluate(node.left, get, prefix, attributes, depth + 1) ||
        evaluate(node.right, get, prefix, attributes, depth + 1)
      );
    case 'not':
      return !evaluate(node.filter, get, prefix, attributes, depth + 1);
    case 'valuePath': {
      const parent = get(node.attr);
      const innerPrefix = `${prefix}${node.attr}.`;
      const elements = valuesOf(parent);
      if (elements.length > 0 && elements.every(isRecord)) {
        return elements.some((element) =>
          evaluate(node.filter, recordGetter(element), innerPrefix, attributes, depth + 1),
        );
      }
      return evaluate(node.filter, (path) => get(`${node.attr}.${path}`), innerPrefix, attributes, depth + 1);
    }
    case 'present':
      return valuesOf(get(node.attr)).some(isPresent);
    case 'compare': {
      const values = valuesOf(get(node.attr));
      const attribute = lookup(attributes, `${prefix}${node.attr}`);
      const { op, value } = node;
      if (value === null) {
        const present = values.some(isPresent);
        return op === 'eq' ? !present : op === 'ne' ? present : false;
      }
      if (op === 'ne')
        return values.length === 0 || values.some((v) => !compareOne(v, 'eq', value, attribute));
      return values.some((v) => compareOne(v, op, value, attribute));
    }
    default:
      return false;
  }
}

function ordered(op: ScimCompareOperator, difference: number): boolean {
  switch (op) {
    case 'eq':
      return difference === 0;
    case 'gt':
      return difference > 0;
    case 'ge':
      return difference >= 0;
    case 'lt':
      return difference < 0;
    case 'le':
      return difference <= 0;
    default:
      return false;
  }
}

function compareOne(
  actual: unknown,
  op: ScimCompareOperator,
  value: Exclude<ScimFilterValue, null>,
  attribute: ScimAttribute | undefined,
): boolean {
  if (typeof value === 'boolean') return op === 'eq' && actual === value;
  if (typeof value === 'number') return typeof actual === 'number' && ordered(op, actual - value);
  if (typeof value !== 'string') return false;
  if (actual instanceof Date || attribute?.type === 'dateTime') {
    const left =
      actual instanceof Date
        ? actual.getTime()
        : typeof actual === 'string'
          ? (parseDateTime(actual)?.getTime() ?? NaN)
          : NaN;
    const right = parseDateTime(value)?.getTime() ?? NaN;
    if (Number.isNaN(left) || Number.isNaN(right)) return false;
    return ordered(op, left - right);
  }
  if (typeof actual !== 'string') return false;
  const caseExact = attribute?.caseExact ?? false;
  const a = caseExact ? actual : foldCase(actual);
  const b = caseExact ? value : foldCase(value);
  switch (op) {
    case 'co':
      return a.includes(b);
    case 'sw':
      return a.startsWith(b);
    case 'ew':
      return a.endsWith(b);
    default:
      return ordered(op, a === b ? 0 : compareCodePoints(a, b));
  }
}
