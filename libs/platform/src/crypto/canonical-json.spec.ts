import canonicalizeModule from 'canonicalize';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from './canonical-json.js';

// An independent implementation to compare with (its typings declare an ES default export; it is CommonJS).
const reference = canonicalizeModule as unknown as (value: unknown) => string;

describe('canonicalJson (RFC 8785)', () => {
  it('matches the RFC examples for numbers and key order', () => {
    expect(canonicalJson({ b: 1, a: [1e21, 1e-7, -0, 0.000001, 333333333.3333333] })).toBe(
      '{"a":[1e+21,1e-7,0,0.000001,333333333.3333333],"b":1}',
    );
    // Keys sort by UTF-16 code units: "\u20ac" (€) before "\ud83d\ude00" (😀), "\r" first.
    expect(canonicalJson({ '\u20ac': 1, '\ud83d\ude00': 2, '\r': 3, '1': 4, ö: 5 })).toBe(
      '{"\\r":3,"1":4,"ö":5,"€":1,"😀":2}',
    );
  });

  it('agrees with an independent implementation on nested, unicode and escaped values', () => {
    const samples: unknown[] = [
      null,
      true,
      'line\nbreak "quoted" \\ \u0001 \u2028',
      { z: { y: [3, 2, { x: null, w: 'é' }] }, a: [], m: {} },
      [1.5, -2, 1e300, 5e-324, 123456789012345680000],
      { emoji: '👩‍💻', nested: { deeper: { deepest: [true, false, 'x'] } } },
    ];
    for (const sample of samples) expect(canonicalJson(sample)).toBe(reference(sample));
  });

  it('drops undefined members, writes undefined array items as null, and refuses non-JSON values', () => {
    expect(canonicalJson({ a: undefined, b: [undefined, 1] })).toBe('{"b":[null,1]}');
    expect(() => canonicalJson({ a: Number.NaN })).toThrow(TypeError);
    expect(() => canonicalJson({ a: Infinity })).toThrow(TypeError);
    expect(() => canonicalJson(10n)).toThrow(TypeError);
  });
});
