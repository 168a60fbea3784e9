import { describe, expect, it } from 'vitest';
import { AppError } from '#platform';
import {
  mergePatch,
  mergePreferences,
  PREFERENCES_MAX_BYTES,
  PREFERENCES_MAX_DEPTH,
} from './preferences-merge.js';

const nested = (levels: number): unknown => (levels === 0 ? 1 : { n: nested(levels - 1) });

function validationMessage(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).status).toBe(400);
    expect((err as AppError).code).toBe('VALIDATION_ERROR');
    expect((err as AppError).details).toEqual([{ field: 'preferences', message: expect.any(String) }]);
    return (err as AppError).message;
  }
  throw new Error('expected a validation error');
}

describe('JSON Merge Patch of preferences', () => {
  // Examples from RFC 7396, appendix A.
  it.each([
    [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
    [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
    [{ a: 'b' }, { a: null }, {}],
    [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
    [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
    [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
    [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
    [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
    [{ e: null }, { a: 1 }, { e: null, a: 1 }],
    [[1, 2], { a: 'b', c: null }, { a: 'b' }],
    [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
  ])('merges %j with %j into %j', (target, patch, expected) => {
    expect(mergePatch(target, patch)).toEqual(expected);
  });

  it('leaves both inputs unchanged', () => {
    const target = { a: { b: 1 } };
    const patch = { a: { c: 2 } };
    mergePatch(target, patch);
    expect(target).toEqual({ a: { b: 1 } });
    expect(patch).toEqual({ a: { c: 2 } });
  });

  it('keeps a member named __proto__ as an ordinary member', () => {
    const patch = JSON.parse('{"__proto__": {"polluted": true}}') as unknown;
    const merged = mergePatch({}, patch) as Record<string, unknown>;
    expect(Object.getPrototypeOf(merged)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.hasOwn(merged, '__proto__')).toBe(true);
  });

  it('accepts patches and results at the bounds', () => {
    expect(mergePreferences({}, nested(PREFERENCES_MAX_DEPTH))).toEqual(nested(PREFERENCES_MAX_DEPTH));
    const filler = 'x'.repeat(PREFERENCES_MAX_BYTES - '{"k":""}'.length);
    expect(mergePreferences({}, { k: filler })).toEqual({ k: filler });
  });

  it.each([
    ['an array', ['a']],
    ['a string', 'dark'],
    ['null', null],
    ['undefined (no body)', undefined],
  ])('refuses %s as a patch', (_case, patch) => {
    expect(validationMessage(() => mergePreferences({}, patch))).toMatch(/JSON object/);
  });

  it('refuses a patch nested too deep, too large or with unpaired surrogates', () => {
    expect(validationMessage(() => mergePreferences({}, nested(PREFERENCES_MAX_DEPTH + 1)))).toMatch(
      /deeper/,
    );
    expect(validationMessage(() => mergePreferences({}, { k: 'x'.repeat(PREFERENCES_MAX_BYTES) }))).toMatch(
      /exceed/,
    );
    expect(validationMessage(() => mergePreferences({}, { k: 'a\ud800b' }))).toMatch(/surrogate/);
    expect(validationMessage(() => mergePreferences({}, { ['\udc00']: 1 }))).toMatch(/surrogate/);
  });

  it('measures the limit in UTF-8 bytes', () => {
    // 6,000 euro signs are 18,000 bytes of UTF-8 but 6,000 UTF-16 code units.
    expect(validationMessage(() => mergePreferences({}, { k: '€'.repeat(6000) }))).toMatch(/exceed/);
  });

  it('refuses a patch whose merged result would exceed the bounds', () => {
    const half = 'x'.repeat(PREFERENCES_MAX_BYTES / 2);
    expect(validationMessage(() => mergePreferences({ a: half }, { b: half }))).toMatch(/merged/);
    // Depth cannot grow by merging: every container of the result is in the stored value or in the patch.
    const deepest = nested(PREFERENCES_MAX_DEPTH - 1);
    expect(mergePreferences({ a: deepest }, { b: deepest })).toEqual({ a: deepest, b: deepest });
  });
});
