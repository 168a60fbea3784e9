import { describe, expect, it } from 'vitest';
import { parseScimFilter } from './parser.js';
import { refusal } from './shared.fixture.js';

// The lexer's values and refusals, seen through parseScimFilter: the tree a value ends up in, the message a
// malformed string, number or character is refused with.
describe('lexer', () => {
  const cmp = (attr: string, op: string, value: unknown) => ({ kind: 'compare', attr, op, value });

  it('reads JSON values: literals, numbers and strings with every escape', () => {
    expect(parseScimFilter('a eq true')).toEqual(cmp('a', 'eq', true));
    expect(parseScimFilter('a eq False')).toEqual(cmp('a', 'eq', false));
    expect(parseScimFilter('a eq null')).toEqual(cmp('a', 'eq', null));
    expect(parseScimFilter('a gt -12.5e+2')).toEqual(cmp('a', 'gt', -1250));
    expect(parseScimFilter('a eq 0')).toEqual(cmp('a', 'eq', 0));
    expect(parseScimFilter('a eq ""')).toEqual(cmp('a', 'eq', ''));
    expect(parseScimFilter(String.raw`a eq "q\"b\\s\/b\bf\fn\nr\rt\tu\u00e9\u00C9\ud83d\ude00"`)).toEqual(
      cmp('a', 'eq', 'q"b\\s/b\bf\fn\nr\rt\tuéÉ😀'),
    );
    expect(parseScimFilter('a eq "raw ünïcödé 😀 and ) ] ( ["')).toEqual(
      cmp('a', 'eq', 'raw ünïcödé 😀 and ) ] ( ['),
    );
    expect(parseScimFilter('\ta\neq\r"x"  ')).toEqual(cmp('a', 'eq', 'x'));
  });

  it.each([
    ['unterminated string', 'userName eq "abc', /Unterminated/],
    ['unterminated escape', 'userName eq "abc\\', /Unterminated/],
    ['raw control character', 'userName eq "a\u0001b"', /Control character/],
    ['raw newline in a string', 'userName eq "a\nb"', /Control character/],
    ['bad escape', 'userName eq "a\\xb"', /escape/],
    ['short \\u escape', 'userName eq "\\u12"', /escape/],
    ['\\u0000', 'userName eq "\\u0000"', /u0000/],
    ['unpaired surrogate escape', 'userName eq "\\ud800x"', /surrogate/],
    ['lone low surrogate escape', 'userName eq "\\udc00"', /surrogate/],
    ['raw unpaired surrogate', 'userName eq "\ud800"', /surrogate/],
    ['attribute starting with a digit', '1abc eq "x"', /number/],
    ['attribute starting with underscore', '_abc eq "x"', /Unexpected character/],
    ['stray character', 'userName eq "a" & title pr', /Unexpected character/],
    ['number with leading zero', 'a eq 01', /number/],
    ['number without fraction digits', 'a eq 1.', /number/],
    ['minus alone', 'a eq -', /number/],
    ['huge number', 'a eq 1e999', /range/],
  ])('refuses %s', (_name, filter, message) => {
    expect(refusal(() => parseScimFilter(filter)).message).toMatch(message);
  });
});
