import type { SQL } from 'drizzle-orm';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type FilterNode, ScimFilterError } from './ast.js';
import { matchesScimFilter } from './evaluate.js';
import {
  leafArb,
  leavesOf,
  likePattern,
  render,
  TOP_ATTRS,
  treeArb,
  typedLeafArb,
} from './generators.fixture.js';
import { parseScimFilter } from './parser.js';
import { ATTRIBUTES, FIXTURES, getter, memoryIds, toQuery, useFixtureDatabase } from './shared.fixture.js';
import { compileScimFilter } from './to-sql.js';

// Generated filters: every one parses or is refused with a ScimFilterError, compiles to SQL that binds every value,
// and selects the same rows in SQL on PGlite as in memory.
describe('generated filters against PostgreSQL (PGlite)', () => {
  const sqlIds = useFixtureDatabase();

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
});
