// The JSON text itself: malformed, deep, wide, long, prototype and duplicate keys, overflowing numbers, invalid
// UTF-8, oversized; and a body sent to an operation that takes none.
import fc from 'fast-check';
import type { Mutator } from '../draft.js';
import { Raw, cloneJson, encodeJson } from '../json-raw.js';
import { isFreeForm } from '../openapi.js';
import { deepJson, wideObject } from '../schema-arbitrary.js';
import { asObject, baseJson, conventions, hasJsonBody, jsonMedia, refuseIf, withBody } from './support.js';

export const JSON_MUTATORS: Mutator[] = [
  {
    name: 'json-malformed',
    family: 'json',
    weight: 2,
    applies: hasJsonBody,
    arb: (base) =>
      fc
        .constantFrom(
          ['{"a":', 'truncated'],
          ['{"a":1}}', 'trailing garbage'],
          ["{'a':1}", 'single quotes'],
          ['{"a":1,}', 'a trailing comma'],
          ['{/*c*/"a":1}', 'a comment'],
          ['\ufeff{}', 'a byte-order mark'],
          ['', 'an empty body'],
          ['   ', 'a blank body'],
          ['null', 'null'],
          ['[]', 'an array'],
          ['"text"', 'a string'],
          ['12', 'a number'],
          ['{"a":"b\u0000c"}', 'a raw NUL byte inside a string'],
          ['{"a":"line\nbreak"}', 'a raw line feed inside a string'],
          ['{"a":01}', 'a leading zero'],
          ['{"a":NaN}', 'NaN'],
          ['{"a":"\\x41"}', 'an invalid escape'],
          ['{"a":"\\ud800"}', 'an escaped lone surrogate'],
          ['{"\\ud800":1}', 'an escaped lone surrogate in a key'],
          ['{"a\\u0000":1}', 'an escaped NUL in a key'],
        )
        .map(([text, label]) => ({
          ...withBody(base, Buffer.from(text, 'utf8')),
          mutator: 'json-malformed',
          note: `JSON text: ${label}`,
        })),
  },
  {
    name: 'json-deep',
    family: 'json',
    weight: 1,
    applies: hasJsonBody,
    arb: (base, ctx) =>
      fc
        .tuple(
          baseJson(ctx),
          fc.constantFrom(65, 100, 5000),
          fc.constantFrom<'array' | 'object'>('array', 'object'),
          fc.boolean(),
        )
        .map(([json, levels, kind, atRoot]) => ({
          ...withBody(
            base,
            encodeJson(atRoot ? deepJson(levels, kind) : { ...asObject(json), deep: deepJson(levels, kind) }),
          ),
          mutator: 'json-deep',
          note: `${levels} levels of ${kind}s ${atRoot ? 'as the body' : 'under an unknown member'}`,
        })),
  },
  {
    name: 'json-wide',
    family: 'json',
    weight: 1,
    applies: hasJsonBody,
    arb: (base, ctx) =>
      baseJson(ctx).map((json) => ({
        ...withBody(base, encodeJson({ ...asObject(json), ...wideObject(ctx.wideKeys) })),
        mutator: 'json-wide',
        note: `${ctx.wideKeys.toLocaleString('en')} unknown members beside a valid body`,
      })),
  },
  {
    name: 'json-long-array',
    family: 'json',
    weight: 1,
    applies: hasJsonBody,
    arb: (base, ctx) =>
      baseJson(ctx).map((json) => ({
        ...withBody(base, encodeJson({ ...asObject(json), fuzzList: new Array(100_000).fill(0) })),
        mutator: 'json-long-array',
        note: 'a 100,000-element array under an unknown member',
      })),
  },
  {
    name: 'json-proto',
    family: 'json',
    weight: 1,
    applies: hasJsonBody,
    arb: (base, ctx) =>
      fc
        .tuple(
          baseJson(ctx),
          fc.constantFrom(
            '{"__proto__":{"isAdmin":true}}',
            '{"constructor":{"prototype":{"isAdmin":true}}}',
            '{"__proto__":null}',
          ),
        )
        .map(([json, extra]) => {
          const text = encodeJson(json).toString('utf8');
          const spliced =
            text.startsWith('{') && text.length > 2 ? `${extra.slice(0, -1)},${text.slice(1)}` : extra;
          return {
            ...withBody(base, Buffer.from(spliced, 'utf8')),
            mutator: 'json-proto',
            note: `prototype keys: ${extra}`,
          };
        }),
  },
  {
    name: 'json-duplicate-keys',
    family: 'json',
    weight: 1,
    applies: hasJsonBody,
    arb: (base, ctx) =>
      baseJson(ctx).map((json) => {
        const obj = asObject(json);
        const key = Object.keys(obj)[0] ?? 'name';
        const text = encodeJson(obj).toString('utf8');
        const spliced = `{${JSON.stringify(key)}:12345,${text.slice(1)}`;
        return {
          ...withBody(base, Buffer.from(spliced === '{"name":12345,}' ? '{"name":12345}' : spliced, 'utf8')),
          mutator: 'json-duplicate-keys',
          note: `the member ${key} twice`,
        };
      }),
  },
  {
    name: 'json-overflow-number',
    family: 'json',
    weight: 2,
    applies: hasJsonBody,
    arb: (base, ctx) =>
      fc
        .tuple(baseJson(ctx), fc.constantFrom('1e309', '-1e309', '1' + '0'.repeat(400)))
        .map(([json, num]) => {
          // Put the number inside a free-form member of the body when there is one (where no DTO checks it),
          // else as an unknown member.
          const schema = ctx.resolver.resolve(ctx.op.body!.content[jsonMedia(ctx.op)!]);
          const free = Object.entries(schema.properties ?? {}).find(([, s]) =>
            isFreeForm(ctx.resolver.resolve(s)),
          )?.[0];
          const obj = cloneJson(asObject(json));
          let where: string;
          if (isFreeForm(schema)) {
            obj.fuzzNumber = Raw.text(num, num.slice(0, 12));
            where = 'in the free-form body';
          } else if (free) {
            obj[free] = { ...asObject(obj[free]), fuzzNumber: Raw.text(num) };
            where = `in the free-form member ${free}`;
          } else {
            obj.fuzzNumber = Raw.text(num);
            where = 'as an unknown member';
          }
          return {
            ...withBody(base, encodeJson(obj)),
            mutator: 'json-overflow-number',
            note: `${num.length > 12 ? num.slice(0, 6) + '… (401 digits)' : num} ${where}`,
            mustRefuse: refuseIf(
              conventions(ctx),
              `a number that overflows a double in the JSON body: ${num.length > 12 ? num.slice(0, 6) + '… (401 digits)' : num}`,
            ),
          };
        }),
  },
  {
    name: 'json-invalid-utf8',
    family: 'json',
    weight: 2,
    applies: hasJsonBody,
    arb: (base, ctx) =>
      fc
        .tuple(
          baseJson(ctx),
          fc.constantFrom<[string, string]>(
            ['a\xff\xfeb', 'FF FE'],
            ['\xc0\xaf', 'C0 AF (overlong)'],
            ['\xed\xa0\x80', 'ED A0 80 (surrogate)'],
            ['x\x80', '80 (continuation)'],
          ),
        )
        .map(([json, [bytes, label]]) => {
          // The invalid bytes replace the first string of the body, else go in an unknown member.
          const obj = cloneJson(asObject(json));
          const key = Object.keys(obj).find((k) => typeof obj[k] === 'string') ?? 'fuzzText';
          obj[key] = Raw.text(`"${bytes}"`, label);
          return {
            ...withBody(base, encodeJson(obj)),
            mutator: 'json-invalid-utf8',
            note: `invalid UTF-8 (${label}) in ${key}`,
            mustRefuse: refuseIf(conventions(ctx), `invalid UTF-8 in the JSON body: ${label}`),
          };
        }),
  },
  {
    name: 'json-oversized',
    family: 'json',
    weight: 1,
    applies: hasJsonBody,
    arb: (base) =>
      fc.constantFrom(1024 * 1024 + 1, 2 * 1024 * 1024).map((size) => ({
        ...withBody(base, Buffer.from(JSON.stringify({ fuzz: 'O'.repeat(size) }), 'utf8')),
        mutator: 'json-oversized',
        note: `a body of ${size.toLocaleString('en')}+ bytes (over the 1 MiB limit)`,
      })),
  },
  {
    name: 'unexpected-body',
    family: 'json',
    weight: 1,
    applies: (ctx) => !ctx.op.body,
    arb: (base) =>
      fc
        .constantFrom<[string, string]>(
          ['{"fuzz":1}', 'application/json'],
          ['{"a":', 'application/json'],
          ['a=1', 'application/x-www-form-urlencoded'],
          ['\x00\xff', 'application/octet-stream'],
        )
        .map(([text, ct]) => ({
          ...withBody(base, Buffer.from(text, 'latin1'), ct),
          mutator: 'unexpected-body',
          note: `a ${ct} body on an operation that takes none`,
        })),
  },
];
