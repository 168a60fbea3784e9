import { describe, expect, it } from 'vitest';
import type { ClauseStatus } from './compliance-mapping.schema.js';
import { coverageOf } from './coverage.js';

const ids = ['a', 'b', 'c', 'd', 'e', 'f'];
const of = (entries: [string, ClauseStatus][]) => coverageOf(ids, new Map(entries));

describe('coverageOf', () => {
  it('counts clauses without a note as gaps', () => {
    expect(of([])).toEqual({ covered: 0, partial: 0, gap: 6, notApplicable: 0, total: 6, percent: 0 });
  });

  it('halves partial clauses and leaves not-applicable ones out of the denominator', () => {
    // covered 2, partial 1, n/a 1, gap 2: (2 + 0.5) / (6 − 1) = 0.5 → 50.0
    expect(
      of([
        ['a', 'covered'],
        ['b', 'covered'],
        ['c', 'partial'],
        ['d', 'not-applicable'],
        ['e', 'gap'],
      ]),
    ).toEqual({ covered: 2, partial: 1, gap: 2, notApplicable: 1, total: 6, percent: 50 });
  });

  it('rounds to one decimal', () => {
    // covered 1 of 6: 1 / 6 = 16.666… → 16.7; partial 1 of 6: 0.5 / 6 = 8.333… → 8.3
    expect(of([['a', 'covered']]).percent).toBe(16.7);
    expect(of([['a', 'partial']]).percent).toBe(8.3);
    // covered 2 + partial 1, 3 n/a: 2.5 / 3 = 83.333… → 83.3
    expect(
      of([
        ['a', 'covered'],
        ['b', 'covered'],
        ['c', 'partial'],
        ['d', 'not-applicable'],
        ['e', 'not-applicable'],
        ['f', 'not-applicable'],
      ]).percent,
    ).toBe(83.3);
  });

  it('is 0 when every clause is not applicable', () => {
    const all = of(ids.map((id) => [id, 'not-applicable'] as [string, ClauseStatus]));
    expect(all).toEqual({ covered: 0, partial: 0, gap: 0, notApplicable: 6, total: 6, percent: 0 });
  });

  it('is 100 when every applicable clause is covered', () => {
    const c = of(ids.map((id, i) => [id, i === 0 ? 'not-applicable' : 'covered'] as [string, ClauseStatus]));
    expect(c.percent).toBe(100);
  });

  it('ignores statuses of ids outside the catalogue', () => {
    expect(of([['zz', 'covered']])).toMatchObject({ covered: 0, gap: 6, total: 6 });
  });
});
