import { describe, expect, it } from 'vitest';
import type { FilterNode } from './ast.js';
import { ATTRIBUTES, compile, refusal, toQuery } from './shared.fixture.js';
import { compileScimFilter } from './to-sql.js';

// The SQL text and parameters a filter compiles to, and what the compiler refuses; the rows it selects are in
// sql-and-memory.spec.ts.
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
