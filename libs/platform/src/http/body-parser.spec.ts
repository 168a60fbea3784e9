import { describe, expect, it } from 'vitest';
import { AppError } from './app-error.js';
import { assertSafeJson, MAX_JSON_DEPTH } from './body-parser.js';

function refusal(value: unknown, limits?: Parameters<typeof assertSafeJson>[2]): AppError {
  try {
    assertSafeJson(value, 'Request body', limits);
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    return err as AppError;
  }
  throw new Error('expected a refusal');
}

const wide = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]));

describe('assertSafeJson', () => {
  it('accepts ordinary JSON values', () => {
    expect(() => assertSafeJson({ a: [1, 'two', null, true, { b: -0.5 }], c: 'ü✓😀', d: {} })).not.toThrow();
  });

  it('names the field holding a NUL, an unpaired surrogate or a number that overflowed to Infinity', () => {
    expect(refusal({ a: [{ b: 'x\u0000' }] }).details).toEqual([
      { field: 'a.0.b', message: expect.stringMatching(/^a\.0\.b must not contain NUL/) },
    ]);
    expect(refusal({ a: 'bad \ud800' }).details?.[0]?.field).toBe('a');
    const overflow = refusal(JSON.parse('{"metadata":{"n":1e309}}'));
    expect(overflow).toMatchObject({ status: 400, code: 'VALIDATION_ERROR' });
    expect(overflow.details).toEqual([
      { field: 'metadata.n', message: expect.stringMatching(/finite number/) },
    ]);
    expect(refusal({ m: [-Infinity] }).details?.[0]?.field).toBe('m.0');
    expect(refusal({ m: NaN }).details?.[0]?.field).toBe('m');
  });

  it('names the parent of an unstorable key rather than echoing the key', () => {
    expect(refusal({ outer: { 'k\u0000': 1 } }).details?.[0]?.field).toBe('outer');
  });

  it(`refuses nesting deeper than ${MAX_JSON_DEPTH} levels and accepts exactly that depth`, () => {
    const nest = (depth: number) => {
      let value: unknown = 1;
      for (let i = 0; i < depth; i += 1) value = [value];
      return value;
    };
    expect(() => assertSafeJson(nest(MAX_JSON_DEPTH))).not.toThrow();
    expect(refusal(nest(MAX_JSON_DEPTH + 1)).message).toMatch(/nested deeper than 64/);
  });

  it('refuses an object with more keys than maxObjectKeys, naming it, and accepts exactly that many', () => {
    const limits = { maxObjectKeys: 10, maxTotalKeys: 1000 };
    expect(() => assertSafeJson({ inner: wide(10) }, 'Request body', limits)).not.toThrow();
    const err = refusal({ inner: wide(11) }, limits);
    expect(err.details).toEqual([
      { field: 'inner', message: 'inner must not have more than 10 keys in one object' },
    ]);
  });

  it('counts keys and array items of the whole value against maxTotalKeys', () => {
    const limits = { maxObjectKeys: 100, maxTotalKeys: 50 };
    // 1 + 49 = 50 keys and items: at the bound.
    expect(() => assertSafeJson({ list: Array(49).fill(0) }, 'Request body', limits)).not.toThrow();
    expect(refusal({ list: Array(50).fill(0) }, limits).message).toMatch(
      /must not have more than 50 keys and array items in all/,
    );
    expect(refusal({ a: wide(30), b: wide(30) }, limits).message).toMatch(/more than 50 keys/);
  });
});
