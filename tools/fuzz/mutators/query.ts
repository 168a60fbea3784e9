// The request target: bad path ids, bad values of declared query parameters, hostile query strings.
import fc from 'fast-check';
import type { Mutator } from '../draft.js';
import { violatesParam } from '../schema-arbitrary.js';
import { pathParams, queryParams } from './support.js';

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

export const QUERY_MUTATORS: Mutator[] = [
  {
    name: 'path-bad-id',
    family: 'path',
    weight: 6,
    applies: (ctx) => pathParams(ctx.op).length > 0,
    arb: (base, ctx) =>
      fc
        .tuple(
          fc.constantFrom(...pathParams(ctx.op)),
          fc.oneof(
            fc.constantFrom(
              '0'.repeat(23),
              'f'.repeat(25),
              'z'.repeat(24),
              'ABCDEF0123456789ABCDEF01',
              '-1',
              '0',
              'null',
              'undefined',
              '%20',
              '.',
              '..',
              '%2e%2e',
              '%2F',
              'a%2Fb',
              '%00',
              'a%00b',
              '%ff',
              '%C0%AF',
              '%E2%80%AE',
              '%',
              '%zz',
              '%u0000',
              '%25',
              'x'.repeat(5000),
              '%F0%9F%98%80',
              '1e309',
              '[object%20Object]',
              '__proto__',
              'constructor',
            ),
            fc.stringMatching(/^[0-9a-f]{24}$/),
          ),
        )
        .map(([p, raw]) => {
          const violation = violatesParam(p.schema, safeDecode(raw), ctx);
          const nul = /%00|%u0000/i.test(raw);
          return {
            ...base,
            pathParams: { ...base.pathParams, [p.name]: raw },
            mutator: 'path-bad-id',
            note: `path parameter ${p.name} = ${raw.length > 60 ? `${raw.slice(0, 10)}… (${raw.length} chars)` : raw}`,
            mustRefuse: nul
              ? 'a NUL character in a path parameter'
              : violation && raw !== '%25' && raw !== '%'
                ? `a path parameter that violates its declared schema: ${p.name} ${violation}`
                : undefined,
          };
        }),
  },
  {
    name: 'query-bad-value',
    family: 'query',
    weight: 4,
    applies: (ctx) => queryParams(ctx.op).length > 0,
    arb: (base, ctx) =>
      fc
        .tuple(
          fc.constantFrom(...queryParams(ctx.op)),
          fc.constantFrom(
            'abc',
            '1e300',
            '-1',
            '0',
            '1.5',
            'NaN',
            'Infinity',
            '',
            '0x10',
            '%201',
            '99999999999999999999',
            '1e309',
            '%00',
            'true',
            '[]',
            '{}',
            'x'.repeat(2000),
            '2026-13-45T99:99:99Z',
            '%ff',
          ),
          fc.boolean(),
        )
        .map(([p, raw, repeat]) => {
          const name = encodeURIComponent(p.name);
          const decoded = safeDecode(raw);
          const others = base.query.filter((q) => !q.startsWith(`${name}=`));
          const query = repeat ? [...others, `${name}=1`, `${name}=${raw}`] : [...others, `${name}=${raw}`];
          const violation = violatesParam(p.schema, repeat ? ['1', decoded] : decoded, ctx);
          return {
            ...base,
            query,
            mutator: 'query-bad-value',
            note: `query ${p.name}=${raw.length > 40 ? raw.slice(0, 10) + '…' : raw}${repeat ? ' (given twice)' : ''}`,
            mustRefuse:
              raw === '%00'
                ? 'a NUL character in the query string'
                : violation
                  ? `a query parameter that violates its declared schema: ${p.name} ${violation}`
                  : undefined,
          };
        }),
  },
  {
    name: 'query-hostile',
    family: 'query',
    weight: 3,
    applies: () => true,
    arb: (base) =>
      fc
        .constantFrom<[string[], string, string | undefined]>(
          [['fuzzUnknown=1'], 'an unknown parameter', undefined],
          [['a=1', 'a=2'], 'an unknown parameter twice', undefined],
          [['page[$gt]=1'], 'bracket syntax', undefined],
          [['__proto__[isAdmin]=true'], 'a prototype key', undefined],
          [['constructor=1'], 'constructor', undefined],
          [['=1&&&=='], 'empty names', undefined],
          [['x=%00'], 'a NUL character', 'a NUL character in the query string'],
          [['x=%ff%fe'], 'invalid UTF-8', undefined],
          [['x=%E2%80%AE%F0%9F%98%80'], 'bidi and astral characters', undefined],
          [['q=' + 'Q'.repeat(20_000)], 'a 20,000-character query string', undefined],
          [Array.from({ length: 1000 }, (_, i) => `p${i}=${i}`), '1,000 parameters', undefined],
        )
        .map(([pairs, label, refuse]) => ({
          ...base,
          query: [...base.query, ...pairs],
          mutator: 'query-hostile',
          note: `query: ${label}`,
          mustRefuse: refuse,
        })),
  },
];
