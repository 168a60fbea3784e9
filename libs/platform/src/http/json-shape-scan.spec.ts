import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { assertSafeJson, type JsonShapeLimits, MAX_JSON_DEPTH } from './body-parser.js';
import { scanJsonShape } from './json-shape-scan.js';

/** The count the walk of the parsed value makes: keys of every object plus items of every array. */
function keysAndItems(value: unknown): { total: number; widest: number } {
  if (value === null || typeof value !== 'object') return { total: 0, widest: 0 };
  const children = Array.isArray(value) ? value : Object.values(value);
  let total = children.length;
  let widest = Array.isArray(value) ? 0 : children.length;
  for (const child of children) {
    const inner = keysAndItems(child);
    total += inner.total;
    widest = Math.max(widest, inner.widest);
  }
  return { total, widest };
}

const limits = (maxObjectKeys: number, maxTotalKeys: number): JsonShapeLimits => ({
  maxObjectKeys,
  maxTotalKeys,
});

describe('scanJsonShape', () => {
  it('agrees with the walk of the parsed value on every JSON text, whitespace and escapes included', () => {
    fc.assert(
      fc.property(
        fc.jsonValue({ maxDepth: 6 }),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 1, max: 40 }),
        fc.boolean(),
        (value, maxObjectKeys, maxTotalKeys, pretty) => {
          const text = JSON.stringify(value, null, pretty ? 2 : undefined);
          const { total, widest } = keysAndItems(JSON.parse(text));
          const verdict = scanJsonShape(text, limits(maxObjectKeys, maxTotalKeys), MAX_JSON_DEPTH);
          if (widest > maxObjectKeys || total > maxTotalKeys) expect(verdict).toBeDefined();
          else expect(verdict).toBeUndefined();
          // The walk refuses exactly the same shapes.
          const walk = () => assertSafeJson(JSON.parse(text), 'Body', limits(maxObjectKeys, maxTotalKeys));
          if (verdict) expect(walk).toThrow(/keys|nested/);
          else expect(walk).not.toThrow(/keys|nested/);
        },
      ),
      { seed: 7, numRuns: 2000 },
    );
  });

  it('ignores brackets, braces and commas inside strings, after escaped quotes too', () => {
    const text = JSON.stringify({ a: '[{,,,}]', b: 'quote \\" , [ {', c: ['x\\', ',{'] });
    expect(scanJsonShape(text, limits(3, 5), MAX_JSON_DEPTH)).toBeUndefined();
    expect(scanJsonShape(text, limits(2, 5), MAX_JSON_DEPTH)).toBe('objectKeys');
    expect(scanJsonShape(text, limits(3, 4), MAX_JSON_DEPTH)).toBe('totalKeys');
  });

  it('counts empty containers as values of their parent but holding none', () => {
    expect(scanJsonShape('[{},[],{}]', limits(1, 3), MAX_JSON_DEPTH)).toBeUndefined();
    expect(scanJsonShape('[{},[],{},[]]', limits(1, 3), MAX_JSON_DEPTH)).toBe('totalKeys');
  });

  it(`refuses nesting deeper than ${MAX_JSON_DEPTH} levels`, () => {
    const nest = (n: number) => '['.repeat(n) + ']'.repeat(n);
    expect(scanJsonShape(nest(MAX_JSON_DEPTH), limits(10, 10_000), MAX_JSON_DEPTH)).toBeUndefined();
    expect(scanJsonShape(nest(MAX_JSON_DEPTH + 1), limits(10, 10_000), MAX_JSON_DEPTH)).toBe('depth');
  });

  it('leaves malformed text to the parser instead of failing on it', () => {
    for (const text of ['{"a":', '"unterminated', ']]]', '{"a":1}}}', '']) {
      expect(() => scanJsonShape(text, limits(10, 10), MAX_JSON_DEPTH)).not.toThrow();
    }
  });
});
