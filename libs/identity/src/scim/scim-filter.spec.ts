import { PGlite } from '@electric-sql/pglite';
import { asc, sql, type SQL } from 'drizzle-orm';
import { boolean, integer, PgDialect, pgTable, text, timestamp } from 'drizzle-orm/pg-core';
import { drizzle, type PgliteDatabase } from 'drizzle-orm/pglite';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  compileScimFilter,
  type FilterNode,
  matchesScimFilter,
  parseScimFilter,
  SCIM_FILTER_LIMITS,
  type ScimAttributeMap,
  ScimFilterError,
} from './scim-filter.js';

const users = pgTable('scim_filter_users', {
  id: integer('id').primaryKey(),
  userName: text('user_name'),
  displayName: text('display_name'),
  active: boolean('active'),
  externalId: text('external_id'),
  email: text('email'),
  givenName: text('given_name'),
  familyName: text('family_name'),
  created: timestamp('created', { withTimezone: true, precision: 3 }),
  lastModified: timestamp('last_modified', { withTimezone: true, precision: 3 }),
});

type Fixture = typeof users.$inferSelect;

const at = (iso: string) => new Date(iso);
const FIXTURES: Fixture[] = [
  {
    id: 1,
    userName: 'alice',
    displayName: 'Alice Liddell',
    active: true,
    externalId: 'EXT-001',
    email: 'alice@example.com',
    givenName: 'Alice',
    familyName: 'Liddell',
    created: at('2024-01-01T00:00:00.000Z'),
    lastModified: at('2024-06-01T12:00:00.000Z'),
  },
  {
    id: 2,
    userName: 'bob',
    displayName: "Bob O'Brien",
    active: false,
    externalId: 'ext-002',
    email: 'bob@Example.org',
    givenName: 'Bob',
    familyName: "O'Brien",
    created: at('2024-02-15T08:30:00.000Z'),
    lastModified: null,
  },
  {
    id: 3,
    userName: 'Carol_Smith',
    displayName: 'Carol 100% Smith',
    active: true,
    externalId: null,
    email: 'carol@example.com',
    givenName: 'Carol',
    familyName: 'Smith',
    created: at('2023-12-31T23:59:59.500Z'),
    lastModified: at('2024-03-01T00:00:00.000Z'),
  },
  {
    id: 4,
    userName: 'dave\\admin',
    displayName: 'Dave',
    active: null,
    externalId: 'EXT-004',
    email: null,
    givenName: 'Dave',
    familyName: null,
    created: at('2024-05-05T05:05:05.000Z'),
    lastModified: at('2024-05-05T05:05:05.000Z'),
  },
  {
    id: 5,
    userName: 'ÉMILE',
    displayName: 'Émile Zola',
    active: true,
    externalId: '',
    email: 'emile@example.fr',
    givenName: 'Émile',
    familyName: 'Zola',
    created: at('2022-07-14T10:00:00.000Z'),
    lastModified: at('2024-07-14T10:00:00.000Z'),
  },
  {
    id: 6,
    userName: 'zoë',
    displayName: 'Zoë "Z" Sisyphus',
    active: false,
    externalId: 'EXT-006',
    email: 'zoe@example.com',
    givenName: 'Zoë',
    familyName: 'ΣΊΣΥΦΟΣ',
    created: at('2024-01-01T00:00:00.000Z'),
    lastModified: null,
  },
  {
    id: 7,
    userName: 'eve',
    displayName: '',
    active: true,
    externalId: 'EXT-007',
    email: 'EVE@EXAMPLE.COM',
    givenName: null,
    familyName: 'Eve',
    created: at('2025-01-01T00:00:00.000Z'),
    lastModified: at('2025-01-02T00:00:00.000Z'),
  },
  {
    id: 8,
    userName: 'frank',
    displayName: null,
    active: false,
    externalId: null,
    email: 'frank%x_y@example.com',
    givenName: 'Frank',
    familyName: 'Łukasz',
    created: null,
    lastModified: null,
  },
];
const ALL_IDS = FIXTURES.map((f) => f.id);

/** The fixture table's SCIM attributes; `emails.type` is a constant expression (every address is a work one). */
const ATTRIBUTES: ScimAttributeMap = {
  username: { column: users.userName, type: 'string', caseExact: false },
  displayname: { column: users.displayName, type: 'string', caseExact: false },
  active: { column: users.active, type: 'boolean', caseExact: false },
  externalid: { column: users.externalId, type: 'string', caseExact: true },
  emails: { column: users.email, type: 'string', caseExact: false },
  'emails.value': { column: users.email, type: 'string', caseExact: false },
  'emails.type': { column: sql`'work'::text`, type: 'string', caseExact: false },
  'name.givenname': { column: users.givenName, type: 'string', caseExact: false },
  'name.familyname': { column: users.familyName, type: 'string', caseExact: false },
  'meta.created': { column: users.created, type: 'dateTime', caseExact: false },
  'meta.lastmodified': { column: users.lastModified, type: 'dateTime', caseExact: false },
};

const FIELDS: Record<string, keyof Fixture> = {
  username: 'userName',
  displayname: 'displayName',
  active: 'active',
  externalid: 'externalId',
  emails: 'email',
  'emails.value': 'email',
  'name.givenname': 'givenName',
  'name.familyname': 'familyName',
  'meta.created': 'created',
  'meta.lastmodified': 'lastModified',
};

const getter = (row: Fixture) => (path: string) =>
  path === 'emails.type' ? 'work' : Object.hasOwn(FIELDS, path) ? row[FIELDS[path]!] : undefined;

const dialect = new PgDialect();
const toQuery = (fragment: SQL) => dialect.sqlToQuery(fragment);

const memoryIds = (node: FilterNode) =>
  FIXTURES.filter((row) => matchesScimFilter(node, getter(row), ATTRIBUTES)).map((row) => row.id);

/** The refusal a call makes, or fails the test if it does not throw a ScimFilterError. */
function refusal(call: () => unknown): ScimFilterError {
  try {
    call();
  } catch (err) {
    if (err instanceof ScimFilterError) return err;
    throw err;
  }
  throw new Error('expected a ScimFilterError');
}

const compile = (filter: string) => compileScimFilter(parseScimFilter(filter), ATTRIBUTES);

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
    expect(parseScimFilter('a eq 1 or b eq 2 and c eq 3')).toEqual({
      kind: 'or',
      left: a,
      right: { kind: 'and', left: b, right: c },
    });
    expect(parseScimFilter('a eq 1 and b eq 2 or c eq 3')).toEqual({
      kind: 'or',
      left: { kind: 'and', left: a, right: b },
      right: c,
    });
    expect(parseScimFilter('a eq 1 or b eq 2 or c eq 3')).toEqual({
      kind: 'or',
      left: { kind: 'or', left: a, right: b },
      right: c,
    });
    expect(parseScimFilter('a eq 1 and b eq 2 and c eq 3')).toEqual({
      kind: 'and',
      left: { kind: 'and', left: a, right: b },
      right: c,
    });
    expect(parseScimFilter('(a eq 1 or b eq 2) and c eq 3')).toEqual({
      kind: 'and',
      left: { kind: 'or', left: a, right: b },
      right: c,
    });
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
    ['attribute starting with a digit', '1abc eq "x"', /number/],
    ['attribute starting with underscore', '_abc eq "x"', /Unexpected character/],
    ['stray character', 'userName eq "a" & title pr', /Unexpected character/],
    ['number with leading zero', 'a eq 01', /number/],
    ['number without fraction digits', 'a eq 1.', /number/],
    ['minus alone', 'a eq -', /number/],
    ['huge number', 'a eq 1e999', /range/],
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
});

describe('compileScimFilter', () => {
  it('binds every value and casts dateTimes', () => {
    const query = toQuery(
      compile('userName eq "A" and externalId ne "B" and meta.created gt "2024-01-01T01:00:00+01:00"'),
    );
    expect(query.sql).toBe(
      '((("scim_filter_users"."user_name" is not null and lower("scim_filter_users"."user_name") = lower($1::text))' +
        ' and ("scim_filter_users"."external_id" is distinct from $2::text))' +
        ' and ("scim_filter_users"."created" is not null and "scim_filter_users"."created" > $3::timestamptz))',
    );
    expect(query.params).toEqual(['A', 'B', '2024-01-01T00:00:00.000Z']);
  });

  it('compiles co, sw and ew to an escaped LIKE pattern bound as a parameter', () => {
    const co = toQuery(compile(String.raw`displayName co "50%_a\\b"`));
    expect(co.sql).toContain(`lower("scim_filter_users"."display_name") like lower($1::text) escape '\\'`);
    expect(co.params).toEqual([String.raw`%50\%\_a\\b%`]);
    expect(toQuery(compile('displayName sw "x"')).params).toEqual(['x%']);
    expect(toQuery(compile('displayName ew "x"')).params).toEqual(['%x']);
    expect(toQuery(compile('externalId co "X"')).sql).toContain(`"external_id" like $1::text escape`);
  });

  it('compiles pr, null, booleans and string order', () => {
    expect(toQuery(compile('displayName pr')).sql).toBe(
      `("scim_filter_users"."display_name" is not null and "scim_filter_users"."display_name" <> '')`,
    );
    expect(toQuery(compile('meta.created pr')).sql).toBe(`("scim_filter_users"."created" is not null)`);
    expect(toQuery(compile('displayName eq null')).sql).toMatch(/^\(not \(.* is not null and .* <> ''\)\)$/);
    expect(toQuery(compile('active eq true')).sql).toBe(`("scim_filter_users"."active" is true)`);
    expect(toQuery(compile('active ne true')).sql).toBe(`("scim_filter_users"."active" is not true)`);
    expect(toQuery(compile('active eq false')).params).toEqual([]);
    expect(toQuery(compile('userName gt "m"')).sql).toContain(
      `lower("scim_filter_users"."user_name") collate "C" > lower($1::text)`,
    );
  });

  it('resolves value paths against the parent attribute', () => {
    expect(toQuery(compile('emails[value eq "x" and type eq "work"]')).sql).toBe(
      `(("scim_filter_users"."email" is not null and lower("scim_filter_users"."email") = lower($1::text))` +
        ` and ('work'::text is not null and lower('work'::text) = lower($2::text)))`,
    );
  });

  it('keeps SQL-looking input out of the query text', () => {
    const hostile = `'); drop table scim_filter_users; --`;
    const query = toQuery(
      compile(`userName eq ${JSON.stringify(hostile)} or displayName co ${JSON.stringify(hostile)}`),
    );
    expect(query.sql).not.toContain('drop');
    expect(query.params).toEqual([hostile, `%${hostile.replaceAll('_', '\\_')}%`]);
  });

  it.each([
    ['unknown attribute', 'nickName eq "x"', /Unknown.*'nickname'/],
    ['unknown sub-attribute', 'name.middleName eq "x"', /Unknown.*'name.middlename'/],
    ['unknown value path attribute', 'emails[display eq "x"]', /Unknown.*'emails.display'/],
    ['an inherited property name', 'constructor eq "x"', /Unknown/],
    ['another inherited property name', 'toString pr', /Unknown/],
    ['co on a boolean', 'active co "t"', /boolean/],
    ['gt on a boolean', 'active gt true', /boolean/],
    ['a boolean compared with a string', 'active eq "true"', /boolean/],
    ['a boolean compared with a number', 'active eq 1', /boolean/],
    ['a string compared with a boolean', 'userName eq true', /string/],
    ['a string compared with a number', 'userName eq 1', /string/],
    ['co on a dateTime', 'meta.created co "2024"', /dateTime/],
    ['a dateTime compared with text', 'meta.created gt "yesterday"', /ISO 8601/],
    ['a dateTime compared with an impossible date', 'meta.created gt "2023-02-29T00:00:00Z"', /ISO 8601/],
    ['a dateTime without seconds', 'meta.created gt "2023-02-01T00:00Z"', /ISO 8601/],
    ['a dateTime with a bad offset', 'meta.created gt "2023-02-01T00:00:00+24:00"', /ISO 8601/],
    ['a dateTime compared with a boolean', 'meta.created eq true', /ISO 8601/],
    ['gt null', 'userName gt null', /null/],
    ['co null', 'userName co null', /null/],
  ])('refuses %s', (_name, filter, message) => {
    expect(refusal(() => compile(filter)).message).toMatch(message);
  });

  it('refuses a malformed node', () => {
    expect(
      refusal(() => compileScimFilter({ kind: 'xor' } as unknown as FilterNode, ATTRIBUTES)).message,
    ).toMatch(/Unsupported/);
    const bad = { kind: 'compare', attr: 'username', op: 'like', value: 'x' } as unknown as FilterNode;
    expect(refusal(() => compileScimFilter(bad, ATTRIBUTES)).message).toMatch(/not supported/);
  });
});

describe('matchesScimFilter in memory', () => {
  const match = (filter: string, values: Record<string, unknown>, attributes?: ScimAttributeMap) =>
    matchesScimFilter(parseScimFilter(filter), (path) => values[path], attributes);

  it('matches a multi-valued attribute when any element does', () => {
    const values = { emails: ['a@x.com', 'B@Y.org'] };
    expect(match('emails eq "b@y.org"', values)).toBe(true);
    expect(match('emails ew ".net"', values)).toBe(false);
    expect(match('emails pr', { emails: [null, ''] })).toBe(false);
    expect(match('emails pr', { emails: ['', 'x'] })).toBe(true);
    expect(match('emails eq null', { emails: [] })).toBe(true);
  });

  it('correlates a value path within one complex value', () => {
    const values = {
      emails: [
        { value: 'a@x.com', type: 'home' },
        { Value: 'b@y.com', Type: 'work', primary: true },
      ],
    };
    expect(match('emails[type eq "work" and value eq "b@y.com"]', values)).toBe(true);
    expect(match('emails[type eq "work" and value eq "a@x.com"]', values)).toBe(false);
    expect(match('emails[primary eq true]', values)).toBe(true);
    expect(match('emails[type eq "other"]', values)).toBe(false);
  });

  it('compares case-insensitively unless the map says caseExact', () => {
    expect(match('externalId eq "abc"', { externalid: 'ABC' })).toBe(true);
    expect(match('externalId eq "abc"', { externalid: 'ABC' }, ATTRIBUTES)).toBe(false);
    expect(match('externalId eq "ABC"', { externalid: 'ABC' }, ATTRIBUTES)).toBe(true);
  });

  it('compares dateTimes as instants and mismatched types as no match', () => {
    const created = new Date('2024-01-01T00:00:00Z');
    expect(match('meta.created eq "2024-01-01T02:00:00+02:00"', { 'meta.created': created })).toBe(true);
    expect(match('meta.created lt "2024-01-01T00:00:00.001Z"', { 'meta.created': created })).toBe(true);
    expect(match('meta.created gt "not a date"', { 'meta.created': created })).toBe(false);
    expect(
      match('meta.created ge "2024-01-01T00:00:00Z"', { 'meta.created': '2024-01-01T00:00:00Z' }, ATTRIBUTES),
    ).toBe(true);
    expect(match('active eq "true"', { active: true })).toBe(false);
    expect(match('count gt 2', { count: 3 })).toBe(true);
    expect(match('active co true', { active: true })).toBe(false);
  });
});

describe('against PostgreSQL (PGlite)', () => {
  let client: PGlite;
  let db: PgliteDatabase;

  beforeAll(async () => {
    client = await PGlite.create();
    db = drizzle(client);
    await db.execute(sql`create table scim_filter_users (
      id integer primary key, user_name text, display_name text, active boolean, external_id text, email text,
      given_name text, family_name text, created timestamptz(3), last_modified timestamptz(3))`);
    await db.insert(users).values(FIXTURES);
    // Starting PGlite can take a while on a busy machine.
  }, 60_000);

  afterAll(async () => {
    await client?.close();
  });

  const sqlIds = async (where: SQL) =>
    (await db.select({ id: users.id }).from(users).where(where).orderBy(asc(users.id))).map((r) => r.id);

  const not = (ids: number[]) => ALL_IDS.filter((id) => !ids.includes(id));

  it.each([
    ['userName eq "ALICE"', [1]],
    ['userName eq "émile"', [5]],
    ['userName ne "alice"', not([1])],
    ['externalId eq "ext-001"', []],
    ['externalId eq "EXT-001"', [1]],
    ['externalId ne "EXT-001"', not([1])],
    ['displayName co "100%"', [3]],
    ['displayName co "%"', [3]],
    ['userName co "_"', [3]],
    ['emails.value co "%x_"', [8]],
    [String.raw`userName co "\\"`, [4]],
    [String.raw`userName sw "DAVE\\"`, [4]],
    [`displayName co "o'b"`, [2]],
    [String.raw`displayName co "\"z\""`, [6]],
    ['name.familyName eq "σίσυφοσ"', [6]],
    ['name.familyName sw "σί"', [6]],
    ['name.familyName ew "SZ"', [8]],
    ['name.familyName sw "ł"', [8]],
    ['emails.value ew "EXAMPLE.COM"', [1, 3, 6, 7, 8]],
    ['emails sw "bob@example"', [2]],
    ['userName gt "d"', [4, 5, 6, 7, 8]],
    ['userName lt "c"', [1, 2]],
    ['userName le "bob"', [1, 2]],
    ['userName ge "eve"', [5, 6, 7, 8]],
    ['active eq true', [1, 3, 5, 7]],
    ['active eq false', [2, 6, 8]],
    ['active ne true', [2, 4, 6, 8]],
    ['active ne false', [1, 3, 4, 5, 7]],
    ['active pr', not([4])],
    ['active eq null', [4]],
    ['displayName pr', [1, 2, 3, 4, 5, 6]],
    ['externalId pr', [1, 2, 4, 6, 7]],
    ['externalId eq null', [3, 5, 8]],
    ['externalId ne null', [1, 2, 4, 6, 7]],
    ['meta.created eq "2024-01-01T00:00:00Z"', [1, 6]],
    ['meta.created eq "2024-01-01T01:00:00+01:00"', [1, 6]],
    ['meta.created gt "2024-01-01T00:00:00Z"', [2, 4, 7]],
    ['meta.created ge "2024-01-01T00:00:00.000Z"', [1, 2, 4, 6, 7]],
    ['meta.created lt "2024-01-01T00:00:00Z"', [3, 5]],
    ['meta.created le "2023-12-31T23:59:59.5Z"', [3, 5]],
    ['meta.created ne "2024-01-01T00:00:00Z"', [2, 3, 4, 5, 7, 8]],
    ['meta.lastModified pr', [1, 3, 4, 5, 7]],
    ['not (meta.lastModified pr)', [2, 6, 8]],
    ['userName eq "alice" or userName eq "bob" and active eq true', [1]],
    ['(userName eq "alice" or userName eq "bob") and active eq false', [2]],
    ['not (active eq true) and emails.value co "example.com"', [6, 8]],
    ['not (displayName co "o")', [1, 4, 7, 8]],
    ['not (externalId eq "EXT-004")', not([4])],
    ['emails[value ew "example.com" and type eq "work"]', [1, 3, 6, 7, 8]],
    ['emails[type eq "home"]', []],
    ['EMAILS[VALUE SW "ALICE"]', [1]],
    ['urn:ietf:params:scim:schemas:core:2.0:User:name.givenName eq "dave"', [4]],
    ['name.givenName eq null', [7]],
    ['USERNAME EQ "bob" OR DisplayName Co "zola"', [2, 5]],
  ])('%s', async (filter, expected) => {
    const node = parseScimFilter(filter);
    const ids = await sqlIds(compileScimFilter(node, ATTRIBUTES));
    expect(ids).toEqual(expected);
    expect(memoryIds(node)).toEqual(expected);
  });

  // ---- generated filters ----------------------------------------------------------------------------------------

  /** A generated comparison: how the attribute and operator are written, and the value with its kind. */
  type Leaf = { attr: string; op: string; value?: Value };
  type Value =
    | { kind: 'string'; v: string; asciiEscaped: boolean }
    | { kind: 'dateTime'; v: string }
    | { kind: 'literal'; v: boolean | null }
    | { kind: 'number'; v: number };
  type Tree =
    | { t: 'leaf'; leaf: Leaf }
    | { t: 'and' | 'or'; left: Tree; right: Tree }
    | { t: 'not' | 'paren'; inner: Tree }
    | { t: 'valuePath'; parent: string; inner: Tree };

  const escapeNonAscii = (json: string) =>
    json.replace(/[^\x20-\x7e]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);

  const renderValue = (value: Value, neutral: boolean): string => {
    switch (value.kind) {
      case 'string': {
        const json = JSON.stringify(neutral ? 'x' : value.v);
        return value.asciiEscaped ? escapeNonAscii(json) : json;
      }
      case 'dateTime':
        return JSON.stringify(neutral ? '2000-01-01T00:00:00Z' : value.v);
      case 'literal':
        return String(value.v);
      case 'number':
        return String(value.v);
    }
  };

  /** The filter text; with `neutral`, every string value replaced by one of the same validity. */
  const render = (tree: Tree, neutral = false): string => {
    switch (tree.t) {
      case 'leaf':
        return tree.leaf.value === undefined
          ? `${tree.leaf.attr} ${tree.leaf.op}`
          : `${tree.leaf.attr} ${tree.leaf.op} ${renderValue(tree.leaf.value, neutral)}`;
      case 'and':
      case 'or':
        return `${render(tree.left, neutral)} ${tree.t} ${render(tree.right, neutral)}`;
      case 'not':
        return `not (${render(tree.inner, neutral)})`;
      case 'paren':
        return `(${render(tree.inner, neutral)})`;
      case 'valuePath':
        return `${tree.parent}[${render(tree.inner, neutral)}]`;
    }
  };

  /** The comparisons of a tree with their lower-case attribute paths (as the map keys them). */
  const leavesOf = (tree: Tree, prefix = ''): { path: string; op: string; value?: Value }[] => {
    switch (tree.t) {
      case 'leaf': {
        const attr = tree.leaf.attr.slice(tree.leaf.attr.lastIndexOf(':') + 1).toLowerCase();
        return [{ path: `${prefix}${attr}`, op: tree.leaf.op.toLowerCase(), value: tree.leaf.value }];
      }
      case 'and':
      case 'or':
        return [...leavesOf(tree.left, prefix), ...leavesOf(tree.right, prefix)];
      case 'not':
      case 'paren':
        return leavesOf(tree.inner, prefix);
      case 'valuePath':
        return leavesOf(tree.inner, `${tree.parent.toLowerCase()}.`);
    }
  };

  const TOP_ATTRS = [
    'userName',
    'USERNAME',
    'displayName',
    'active',
    'externalId',
    'emails',
    'emails.value',
    'Emails.Type',
    'name.givenName',
    'name.familyName',
    'meta.created',
    'meta.lastModified',
    'urn:ietf:params:scim:schemas:core:2.0:User:userName',
    'urn:ietf:params:scim:schemas:core:2.0:User:name.familyName',
    'nickName',
    'title',
  ];
  const INNER_ATTRS = ['value', 'VALUE', 'type', 'display'];
  const OPS = ['eq', 'ne', 'co', 'sw', 'ew', 'gt', 'ge', 'lt', 'le', 'EQ', 'Co', 'sW', 'GT', 'pr', 'PR'];
  const HOSTILE = [
    `'); drop table scim_filter_users; --`,
    `' or '1'='1`,
    `"; select pg_sleep(1); --`,
    '%',
    '_',
    '\\',
    '%_\\',
    '$1',
    '$1::text',
    ':=',
    'null',
    '/* */',
    '\u0000',
    '\u007f\u0085\u2028',
    'ΣΊΣΥΦΟΣ',
    '😀 emoji',
    'Łukasz',
  ];

  const stringValue = fc.record({
    kind: fc.constant('string' as const),
    v: fc.oneof(
      fc.string(),
      fc.string({ unit: 'binary' }),
      fc.string({ unit: 'binary-ascii' }),
      fc.constantFrom(...HOSTILE),
      fc.tuple(fc.constantFrom(...HOSTILE), fc.string()).map(([a, b]) => a + b),
    ),
    asciiEscaped: fc.boolean(),
  });
  const dateTimeValue = fc.record({
    kind: fc.constant('dateTime' as const),
    v: fc.oneof(
      fc
        .date({
          min: new Date('1990-01-01T00:00:00Z'),
          max: new Date('2030-12-31T00:00:00Z'),
          noInvalidDate: true,
        })
        .map((d) => d.toISOString()),
      fc.constantFrom(
        '2024-01-01T00:00:00Z',
        '2024-01-01T01:00:00+01:00',
        '2023-12-31T23:59:59.5Z',
        '2024-05-05T05:05:05.000Z',
        '2024-02-30T00:00:00Z',
      ),
    ),
  });
  const anyValue: fc.Arbitrary<Value> = fc.oneof(
    { weight: 4, arbitrary: stringValue },
    { weight: 2, arbitrary: dateTimeValue },
    {
      weight: 1,
      arbitrary: fc.record({ kind: fc.constant('literal' as const), v: fc.constantFrom(true, false, null) }),
    },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('number' as const), v: fc.integer() }) },
  );

  const leafArb = (attrs: string[]): fc.Arbitrary<Tree> =>
    fc.record({ attr: fc.constantFrom(...attrs), op: fc.constantFrom(...OPS), value: anyValue }).map((l) => ({
      t: 'leaf' as const,
      leaf: l.op.toLowerCase() === 'pr' ? { attr: l.attr, op: l.op } : l,
    }));

  const treeArb = (
    attrs: string[],
    leaf: (attrs: string[]) => fc.Arbitrary<Tree>,
    valuePaths: boolean,
  ): fc.Arbitrary<Tree> =>
    fc.letrec<{ tree: Tree }>((tie) => ({
      tree: fc.oneof(
        { depthSize: 'small', maxDepth: 5, withCrossShrink: true },
        { weight: 3, arbitrary: leaf(attrs) },
        fc.record({
          t: fc.constantFrom('and' as const, 'or' as const),
          left: tie('tree'),
          right: tie('tree'),
        }),
        fc.record({ t: fc.constantFrom('not' as const, 'paren' as const), inner: tie('tree') }),
        ...(valuePaths
          ? [
              fc.record({
                t: fc.constant('valuePath' as const),
                parent: fc.constantFrom('emails', 'EMAILS'),
                inner: treeArb(INNER_ATTRS, leaf, false),
              }),
            ]
          : []),
      ),
    })).tree;

  const likePattern = (op: string, v: string) => {
    const escaped = v.replace(/[\\%_]/g, (ch) => `\\${ch}`);
    return op === 'sw' ? `${escaped}%` : op === 'ew' ? `%${escaped}` : `%${escaped}%`;
  };

  // The property tests allow a minute each: a bound on the run on a slow machine, not a measurement.
  it('compiles generated filters to SQL that binds every value and runs, or refuses them', async () => {
    let compiled = 0;
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(treeArb(TOP_ATTRS, leafArb, true), async (tree) => {
        runs++;
        let where: SQL;
        try {
          where = compileScimFilter(parseScimFilter(render(tree)), ATTRIBUTES);
        } catch (err) {
          expect(err).toBeInstanceOf(ScimFilterError);
          return;
        }
        compiled++;
        const query = toQuery(where);
        const skeleton = toQuery(compileScimFilter(parseScimFilter(render(tree, true)), ATTRIBUTES));
        // The query text depends on the filter's shape only, never on its values.
        expect(query.sql).toBe(skeleton.sql);
        for (const { path, op, value } of leavesOf(tree)) {
          if (value?.kind !== 'string') continue;
          if (value.v.length > 2 && !skeleton.sql.includes(value.v)) expect(query.sql).not.toContain(value.v);
          if (ATTRIBUTES[path]?.type !== 'string') continue;
          expect(query.params).toContain(
            ['co', 'sw', 'ew'].includes(op) ? likePattern(op, value.v) : value.v,
          );
        }
        await sqlIds(where);
      }),
      { numRuns: 300 },
    );
    expect(compiled).toBeGreaterThan(runs / 10);
  }, 60_000);

  /** A type-aware generator whose filters mostly compile, with values near the fixtures'. */
  const fixtureStrings = FIXTURES.flatMap((f) =>
    [f.userName, f.displayName, f.externalId, f.email, f.givenName, f.familyName].filter(
      (v): v is string => !!v,
    ),
  );
  const STRING_POOL = [
    ...new Set([
      ...fixtureStrings,
      ...fixtureStrings.map((s) => s.toUpperCase()),
      ...fixtureStrings.map((s) => s.toLowerCase()),
      ...fixtureStrings.map((s) => s.slice(0, 3)),
      ...fixtureStrings.map((s) => s.slice(-3)),
      ...fixtureStrings.map((s) => s.slice(1, 4).toUpperCase()),
      '',
      'a',
      'e',
      'z',
      'é',
      'É',
      'σ',
      'Σ',
      'ς',
      'ł',
      'İ',
      '%',
      '_',
      '\\',
      '"',
      "'",
      '@example.com',
      'EXAMPLE',
      '\uffff',
      '😀',
    ]),
  ];
  const fixtureDates = FIXTURES.flatMap((f) => [f.created, f.lastModified]).filter((d): d is Date => !!d);
  const DATE_POOL = [
    ...fixtureDates.flatMap((d) =>
      [-86_400_000, -1, 0, 1].map((delta) => new Date(d.getTime() + delta).toISOString()),
    ),
    '2024-01-01T02:00:00+02:00',
    '2023-12-31T23:59:59.5Z',
    '2000-01-01T00:00:00Z',
  ];
  const STRING_ATTRS = TOP_ATTRS.filter((a) => {
    const path = a.slice(a.lastIndexOf(':') + 1).toLowerCase();
    return ATTRIBUTES[path]?.type === 'string';
  });
  const typedLeafArb = (attrs: string[]): fc.Arbitrary<Tree> => {
    const inner = attrs === INNER_ATTRS;
    const strings = inner ? ['value', 'type', 'VALUE'] : STRING_ATTRS;
    const toLeaf = (leaf: Leaf): Tree => ({ t: 'leaf', leaf });
    return fc.oneof(
      {
        weight: 4,
        arbitrary: fc
          .record({
            attr: fc.constantFrom(...strings),
            op: fc.constantFrom('eq', 'ne', 'co', 'sw', 'ew', 'gt', 'ge', 'lt', 'le', 'Eq', 'CO'),
            v: fc.constantFrom(...STRING_POOL),
            asciiEscaped: fc.boolean(),
          })
          .map(({ attr, op, v, asciiEscaped }) =>
            toLeaf({ attr, op, value: { kind: 'string', v, asciiEscaped } }),
          ),
      },
      fc
        .record({ attr: fc.constantFrom(...strings), op: fc.constantFrom('eq', 'ne', 'pr') })
        .map(({ attr, op }) =>
          toLeaf(op === 'pr' ? { attr, op } : { attr, op, value: { kind: 'literal', v: null } }),
        ),
      ...(inner
        ? []
        : [
            fc
              .record({ op: fc.constantFrom('eq', 'ne', 'pr'), v: fc.constantFrom(true, false, null) })
              .map(({ op, v }) =>
                toLeaf(
                  op === 'pr'
                    ? { attr: 'active', op }
                    : { attr: 'active', op, value: { kind: 'literal', v } },
                ),
              ),
            fc
              .record({
                attr: fc.constantFrom('meta.created', 'meta.lastModified'),
                op: fc.constantFrom('eq', 'ne', 'gt', 'ge', 'lt', 'le', 'pr'),
                v: fc.constantFrom(...DATE_POOL),
              })
              .map(({ attr, op, v }) =>
                toLeaf(op === 'pr' ? { attr, op } : { attr, op, value: { kind: 'dateTime', v } }),
              ),
          ]),
    );
  };

  it('gives the same rows in SQL and in memory for generated filters', async () => {
    let compared = 0;
    await fc.assert(
      fc.asyncProperty(treeArb(TOP_ATTRS, typedLeafArb, true), async (tree) => {
        let node: FilterNode;
        let where: SQL;
        try {
          node = parseScimFilter(render(tree));
          where = compileScimFilter(node, ATTRIBUTES);
        } catch (err) {
          expect(err).toBeInstanceOf(ScimFilterError);
          return;
        }
        compared++;
        expect(await sqlIds(where)).toEqual(memoryIds(node));
      }),
      { numRuns: 400 },
    );
    expect(compared).toBeGreaterThan(300);
  }, 60_000);

  it('parses any string to a filter or a ScimFilterError, and compiles and matches what parses', () => {
    const valid = treeArb(TOP_ATTRS, leafArb, true).map((tree) => render(tree));
    const mutated = fc
      .tuple(
        valid,
        fc.array(
          fc.record({
            at: fc.nat(),
            kind: fc.constantFrom('delete', 'insert', 'duplicate', 'truncate'),
            ch: fc.constantFrom(
              '(',
              ')',
              '[',
              ']',
              '"',
              '\\',
              ' ',
              'not',
              'and',
              'or',
              'eq',
              'pr',
              ':',
              '.',
              '-',
              'x',
              '\u0000',
              '\ud800',
            ),
          }),
          { maxLength: 4 },
        ),
      )
      .map(([text, edits]) =>
        edits.reduce<string>((s, e) => {
          const i = s.length === 0 ? 0 : e.at % (s.length + 1);
          switch (e.kind) {
            case 'delete':
              return s.slice(0, i) + s.slice(i + 1);
            case 'insert':
              return s.slice(0, i) + e.ch + s.slice(i);
            case 'duplicate':
              return s.slice(0, i) + s.slice(i, i + 10) + s.slice(i);
            case 'truncate':
              return s.slice(0, i);
          }
        }, text),
      );
    const anyString = fc.oneof(
      fc.string(),
      fc.string({ unit: 'binary' }),
      fc.string({ unit: 'binary-ascii' }),
      fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)) }),
      fc.string({
        unit: fc.constantFrom('(', ')', '[', ']', '"', 'a', ' ', 'eq ', 'pr', 'not ', ' and ', '1', '\\'),
      }),
      valid,
      mutated,
    );
    fc.assert(
      fc.property(anyString, (input) => {
        let node: FilterNode;
        try {
          node = parseScimFilter(input);
        } catch (err) {
          expect(err).toBeInstanceOf(ScimFilterError);
          return;
        }
        try {
          compileScimFilter(node, ATTRIBUTES);
        } catch (err) {
          expect(err).toBeInstanceOf(ScimFilterError);
        }
        for (const row of FIXTURES)
          expect(typeof matchesScimFilter(node, getter(row), ATTRIBUTES)).toBe('boolean');
      }),
      { numRuns: 2000 },
    );
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
