import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SCIM_FILTER_LIMITS, ScimFilterError } from './ast.js';
import { parseScimFilter } from './parser.js';
import { refusal } from './shared.fixture.js';

// The grammar, its precedence and its limits; the lexer's own refusals are in lexer.spec.ts.
describe('parseScimFilter', () => {
  const cmp = (attr: string, op: string, value: unknown) => ({ kind: 'compare', attr, op, value });

  it('parses every comparison operator and pr', () => {
    for (const op of ['eq', 'ne', 'co', 'sw', 'ew', 'gt', 'ge', 'lt', 'le']) {
      expect(parseScimFilter(`userName ${op} "x"`)).toEqual(cmp('username', op, 'x'));
    }
    expect(parseScimFilter('title pr')).toEqual({ kind: 'present', attr: 'title' });
  });

  it('reads operators, logical keywords and attribute names case-insensitively', () => {
    expect(parseScimFilter('USERNAME Eq "Bob" AND NOT (Active EQ true) oR title PR')).toEqual({
      kind: 'or',
      left: {
        kind: 'and',
        left: cmp('username', 'eq', 'Bob'),
        right: { kind: 'not', filter: cmp('active', 'eq', true) },
      },
      right: { kind: 'present', attr: 'title' },
    });
  });

  it('gives and precedence over or, and both associate to the left', () => {
    const a = cmp('a', 'eq', 1);
    const b = cmp('b', 'eq', 2);
    const c = cmp('c', 'eq', 3);
    const and = (left: unknown, right: unknown) => ({ kind: 'and', left, right });
    const or = (left: unknown, right: unknown) => ({ kind: 'or', left, right });
    expect(parseScimFilter('a eq 1 or b eq 2 and c eq 3')).toEqual(or(a, and(b, c)));
    expect(parseScimFilter('a eq 1 and b eq 2 or c eq 3')).toEqual(or(and(a, b), c));
    expect(parseScimFilter('a eq 1 or b eq 2 or c eq 3')).toEqual(or(or(a, b), c));
    expect(parseScimFilter('a eq 1 and b eq 2 and c eq 3')).toEqual(and(and(a, b), c));
    expect(parseScimFilter('(a eq 1 or b eq 2) and c eq 3')).toEqual(and(or(a, b), c));
  });

  it('binds not tighter than and', () => {
    expect(parseScimFilter('not (a eq 1) and b eq 2')).toEqual({
      kind: 'and',
      left: { kind: 'not', filter: cmp('a', 'eq', 1) },
      right: cmp('b', 'eq', 2),
    });
    expect(parseScimFilter('not(a eq 1 or b eq 2)')).toEqual({
      kind: 'not',
      filter: { kind: 'or', left: cmp('a', 'eq', 1), right: cmp('b', 'eq', 2) },
    });
    expect(parseScimFilter('((a pr))')).toEqual({ kind: 'present', attr: 'a' });
  });

  it('strips schema URNs and lower-cases attribute paths', () => {
    expect(parseScimFilter('urn:ietf:params:scim:schemas:core:2.0:User:userName eq "x"')).toEqual(
      cmp('username', 'eq', 'x'),
    );
    expect(parseScimFilter('urn:ietf:params:scim:schemas:core:2.0:User:name.givenName sw "J"')).toEqual(
      cmp('name.givenname', 'sw', 'J'),
    );
    expect(
      parseScimFilter('urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:employeeNumber eq "7"'),
    ).toEqual(cmp('employeenumber', 'eq', '7'));
    expect(parseScimFilter('meta.lastModified gt "2011-05-13T04:42:34Z"')).toEqual(
      cmp('meta.lastmodified', 'gt', '2011-05-13T04:42:34Z'),
    );
    expect(parseScimFilter('x-Attr_2$ pr')).toEqual({ kind: 'present', attr: 'x-attr_2$' });
  });

  it('parses value paths with attributes relative to their parent', () => {
    expect(
      parseScimFilter('emails[type eq "work" and value co "@example.com"] or ims[TYPE eq "xmpp"]'),
    ).toEqual({
      kind: 'or',
      left: {
        kind: 'valuePath',
        attr: 'emails',
        filter: { kind: 'and', left: cmp('type', 'eq', 'work'), right: cmp('value', 'co', '@example.com') },
      },
      right: { kind: 'valuePath', attr: 'ims', filter: cmp('type', 'eq', 'xmpp') },
    });
    expect(parseScimFilter('not (emails[not (type eq "home")])')).toEqual({
      kind: 'not',
      filter: {
        kind: 'valuePath',
        attr: 'emails',
        filter: { kind: 'not', filter: cmp('type', 'eq', 'home') },
      },
    });
  });

  it('accepts up to the limits', () => {
    const deep = `${'('.repeat(SCIM_FILTER_LIMITS.maxDepth)}a pr${')'.repeat(SCIM_FILTER_LIMITS.maxDepth)}`;
    expect(parseScimFilter(deep)).toEqual({ kind: 'present', attr: 'a' });
    const many = Array.from({ length: SCIM_FILTER_LIMITS.maxComparisons }, (_, i) => `a eq ${i}`).join(
      ' or ',
    );
    expect(() => parseScimFilter(many)).not.toThrow();
    const prefix = 'a eq "';
    const long = `${prefix}${'x'.repeat(SCIM_FILTER_LIMITS.maxLength - prefix.length - 1)}"`;
    expect(long).toHaveLength(SCIM_FILTER_LIMITS.maxLength);
    expect(() => parseScimFilter(long)).not.toThrow();
  });

  it.each([
    ['empty', '', /empty/],
    ['blank', '  \t ', /empty/],
    ['unknown operator', 'userName equals "x"', /operator/],
    ['missing operator', 'userName "x"', /operator/],
    ['missing operator at the end', 'userName', /operator/],
    ['missing value', 'userName eq', /value/],
    ['bare word as a value', 'userName eq bob', /value/],
    ['trailing value', 'userName eq "a" "b"', /Unexpected token/],
    ['trailing attribute', 'userName eq "a" title', /Unexpected token/],
    ['trailing parenthesis', 'userName eq "a")', /Unbalanced/],
    ['unclosed parenthesis', '(userName eq "a"', /Missing '\)'/],
    ['unclosed bracket', 'emails[type eq "a"', /Missing '\]'/],
    ['dangling and', 'userName eq "a" and', /attribute/],
    ['leading or', 'or userName pr', /operator/],
    ['not without parentheses', 'not userName eq "a"', /parenthesised/],
    ['pr with a string', 'userName pr "x"', /'pr' takes no value/],
    ['pr with a literal', 'active pr true', /'pr' takes no value/],
    ['nested brackets', 'emails[value[type eq "x"] eq "y"]', /nested/],
    ['nested brackets after and', 'emails[type eq "w" and display[x eq "y"]]', /nested/],
    ['value filter on a sub-attribute', 'name.givenName[x eq "y"]', /sub-attribute/],
    ['sub-attribute inside brackets', 'emails[value.x eq "y"]', /bare name/],
    ['URN inside brackets', 'emails[urn:x:value eq "y"]', /URN/],
    ['two sub-attributes', 'name.givenName.x eq "y"', /attribute path/],
    ['bad URN', 'foo:userName eq "x"', /URN/],
    ['URN without attribute', 'urn:ietf:params:scim:schemas:core:2.0:User: eq "x"', /attribute path/],
    ['empty brackets', 'emails[]', /attribute/],
    ['empty parentheses', '()', /attribute/],
  ])('refuses %s', (_name, filter, message) => {
    expect(refusal(() => parseScimFilter(filter)).message).toMatch(message);
  });

  it('gives the position of the fault', () => {
    const error = refusal(() => parseScimFilter('userName eq "abc'));
    expect(error.position).toBe(12);
    expect(error.message).toContain('character 13');
    expect(error.scimType).toBe('invalidFilter');
    expect(refusal(() => parseScimFilter('a eq 1 and b zz 2')).position).toBe(13);
  });

  it('refuses filters beyond the limits', () => {
    const tooDeep = `${'('.repeat(SCIM_FILTER_LIMITS.maxDepth + 1)}a pr${')'.repeat(SCIM_FILTER_LIMITS.maxDepth + 1)}`;
    expect(refusal(() => parseScimFilter(tooDeep)).message).toMatch(/deeper than 32/);
    const tooDeepNot = `${'not ('.repeat(40)}a pr${')'.repeat(40)}`;
    expect(refusal(() => parseScimFilter(tooDeepNot)).message).toMatch(/deeper than 32/);
    const unbalancedDeep = '('.repeat(4000);
    expect(refusal(() => parseScimFilter(unbalancedDeep)).message).toMatch(/deeper than 32/);
    const tooMany = Array.from({ length: SCIM_FILTER_LIMITS.maxComparisons + 1 }, () => 'a pr').join(' and ');
    expect(refusal(() => parseScimFilter(tooMany)).message).toMatch(/More than 100 comparisons/);
    const tooLong = `a eq "${'x'.repeat(SCIM_FILTER_LIMITS.maxLength)}"`;
    expect(refusal(() => parseScimFilter(tooLong)).message).toMatch(/longer than 4096/);
  });

  it('refuses a value that is not a string', () => {
    expect(refusal(() => parseScimFilter(undefined as unknown as string)).message).toMatch(/string/);
    expect(refusal(() => parseScimFilter({} as unknown as string)).message).toMatch(/string/);
  });

  it('refuses long, deep or very repetitive input as a ScimFilterError', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('(', 'not (', 'a eq "x" or ', 'emails[', '"', '\\', ')'),
        fc.integer({ min: 1, max: 2000 }),
        (unit, times) => {
          try {
            parseScimFilter(unit.repeat(times));
          } catch (err) {
            expect(err).toBeInstanceOf(ScimFilterError);
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});
