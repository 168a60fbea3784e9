import {
  type FilterNode,
  SCIM_FILTER_LIMITS,
  type ScimCompareOperator,
  ScimFilterError,
  type ScimFilterValue,
} from './ast.js';
import { isAlpha, isDigit, type Token, tokenize } from './lexer.js';

/** The parser: recursive descent over the lexer's tokens, one token of lookahead, no backtracking. */

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
