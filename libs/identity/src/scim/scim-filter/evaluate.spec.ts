import { describe, expect, it } from 'vitest';
import type { ScimAttributeMap } from './ast.js';
import { matchesScimFilter } from './evaluate.js';
import { parseScimFilter } from './parser.js';
import { ATTRIBUTES } from './shared.fixture.js';

// The in-memory evaluator on hand-made values; its agreement with the SQL is in sql-and-memory.spec.ts.
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
