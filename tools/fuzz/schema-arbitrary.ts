// Schema to fast-check arbitrary: valid values of an OpenAPI schema, and mostly-valid values with exactly one
// mutation (a wrong type, a missing required member, an unknown member, a boundary or one-past-boundary size,
// null where null is not allowed, an overflowing number, a hostile string).
import fc from 'fast-check';
import { Raw, cloneJson, getAt, pathText, setAt, type PathKey } from './json-raw.js';
import {
  isFreeForm,
  isNullable,
  jsonType,
  schemaTypes,
  type JsonSchema,
  type SchemaResolver,
} from './openapi.js';

/** What the arbitraries need besides the schema. */
export interface GenContext {
  resolver: SchemaResolver;
  /**
   * Names of value pools the run holds real values for (ids of existing objects, the fuzzer's own e-mail). A
   * string field whose name has a pool is often given `poolToken(name, n)`, resolved when the request is sent.
   */
  pools: ReadonlySet<string>;
  /**
   * Every optional member present, every array with an item and no nullable value null: the null sweep's base
   * (`nullMemberCasesArb`).
   */
  everyMember?: boolean;
}

/** A placeholder for the n-th value of a pool (modulo its size), resolved when the request is sent. */
export const poolToken = (pool: string, n: number) => `@@pool:${pool}:${n}@@`;

const ID_PATTERN = '^[0-9a-f]{24}$';
const STRING_CAP = 40;
const ARRAY_CAP = 3;
const MAX_DEPTH = 8;

/** The pool a field of this name draws from, if any: `agentIds` items draw from `agentId`. */
export function poolFor(name: string | undefined, ctx: GenContext): string | undefined {
  if (!name) return undefined;
  if (ctx.pools.has(name)) return name;
  const singular = name.endsWith('Ids') ? name.slice(0, -1) : undefined;
  if (singular && ctx.pools.has(singular)) return singular;
  return undefined;
}

const hex24 = fc.stringMatching(/^[0-9a-f]{24}$/);

/** Dates a client would send: this century and the next. */
const plausibleDate = fc.date({
  min: new Date('2000-01-01T00:00:00Z'),
  max: new Date('2100-01-01T00:00:00Z'),
  noInvalidDate: true,
});

function stringArb(s: JsonSchema, name: string | undefined, ctx: GenContext): fc.Arbitrary<string> {
  const min = s.minLength ?? 0;
  const max = Math.max(min, Math.min(s.maxLength ?? min + STRING_CAP, min + STRING_CAP));
  const options: fc.WeightedArbitrary<string>[] = [];
  const pool = poolFor(name, ctx);
  if (pool) options.push({ arbitrary: fc.nat(1000).map((n) => poolToken(pool, n)), weight: 4 });
  if (typeof s.example === 'string') options.push({ arbitrary: fc.constant(s.example), weight: 2 });
  if (s.pattern === ID_PATTERN) options.push({ arbitrary: hex24, weight: 2 });
  else if (s.pattern) {
    let re: RegExp | undefined;
    try {
      re = new RegExp(s.pattern);
    } catch {
      re = undefined;
    }
    if (re) options.push({ arbitrary: fc.stringMatching(re), weight: 2 });
  } else if (s.format === 'email') {
    options.push({ arbitrary: fc.emailAddress().filter((e) => e.length <= (s.maxLength ?? 254)), weight: 2 });
  } else if (s.format === 'date-time') {
    options.push({
      arbitrary: plausibleDate.map((d) => d.toISOString()),
      weight: 2,
    });
  } else if (s.format === 'date') {
    options.push({
      arbitrary: plausibleDate.map((d) => d.toISOString().slice(0, 10)),
      weight: 2,
    });
  } else if (s.format === 'uri' || s.format === 'url') {
    options.push({ arbitrary: fc.webUrl(), weight: 2 });
  } else {
    options.push({ arbitrary: fc.string({ minLength: min, maxLength: max }), weight: 3 });
    options.push({ arbitrary: fc.string({ minLength: min, maxLength: max, unit: 'grapheme' }), weight: 1 });
  }
  return fc.oneof(...options);
}

function bounds(s: JsonSchema, integer: boolean): { min: number; max: number } {
  let min = s.minimum ?? -1_000_000;
  let max = s.maximum ?? 1_000_000;
  if (typeof s.exclusiveMinimum === 'number') min = s.exclusiveMinimum + (integer ? 1 : 1e-6);
  else if (s.exclusiveMinimum === true && s.minimum !== undefined) min = s.minimum + (integer ? 1 : 1e-6);
  if (typeof s.exclusiveMaximum === 'number') max = s.exclusiveMaximum - (integer ? 1 : 1e-6);
  else if (s.exclusiveMaximum === true && s.maximum !== undefined) max = s.maximum - (integer ? 1 : 1e-6);
  if (integer) {
    min = Math.max(Math.ceil(min), Number.MIN_SAFE_INTEGER);
    max = Math.min(Math.floor(max), Number.MAX_SAFE_INTEGER);
  }
  return { min, max: Math.max(min, max) };
}

function numberArb(s: JsonSchema, integer: boolean): fc.Arbitrary<number> {
  const { min, max } = bounds(s, integer);
  const ints = fc.integer({
    min: Math.ceil(Math.max(min, -(2 ** 31))),
    max: Math.floor(Math.min(max, 2 ** 31)),
  });
  const okInts = Math.ceil(Math.max(min, -(2 ** 31))) <= Math.floor(Math.min(max, 2 ** 31));
  if (integer) return okInts ? ints : fc.constant(min);
  const doubles = fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
  return okInts ? fc.oneof(ints, doubles) : doubles;
}

/** A small free-form JSON value (what `additionalProperties: true` holds). */
const freeValue = fc.jsonValue({ maxDepth: 2, depthSize: 'xsmall' });
const freeObject = fc.dictionary(fc.string({ minLength: 1, maxLength: 12 }), freeValue, { maxKeys: 4 });

/** Valid values of a schema (as far as the schema says what valid is). */
export function valueArb(
  schema: JsonSchema | undefined,
  ctx: GenContext,
  name?: string,
  depth = 0,
): fc.Arbitrary<unknown> {
  const s = ctx.resolver.resolve(schema);
  if (s.const !== undefined) return fc.constant(s.const);
  if (s.enum && s.enum.length > 0) return fc.constantFrom(...s.enum);
  const branches = s.oneOf ?? s.anyOf;
  if (branches && branches.length > 0)
    return fc.oneof(...branches.map((b) => valueArb(b, ctx, name, depth + 1)));
  const types = schemaTypes(s);
  if (!types) return depth > MAX_DEPTH ? fc.constant(null) : freeValue;
  const nonNull = types.filter((t) => t !== 'null');
  const arbs = nonNull.map((t) => typeArb(t, s, ctx, name, depth));
  if (types.includes('null') && (!ctx.everyMember || arbs.length === 0)) arbs.push(fc.constant(null));
  if (arbs.length === 0) return fc.constant(null);
  if (arbs.length === 1) return arbs[0]!;
  // A nullable value is mostly not null: null is the last option, with the others weighted up.
  return fc.oneof(...arbs.map((arbitrary, i) => ({ arbitrary, weight: i < nonNull.length ? 3 : 1 })));
}

function typeArb(
  type: string,
  s: JsonSchema,
  ctx: GenContext,
  name: string | undefined,
  depth: number,
): fc.Arbitrary<unknown> {
  switch (type) {
    case 'string':
      return stringArb(s, name, ctx);
    case 'integer':
      return numberArb(s, true);
    case 'number':
      return numberArb(s, false);
    case 'boolean':
      return fc.boolean();
    case 'array': {
      if (depth > MAX_DEPTH) return fc.constant([]);
      // The null sweep's base has an item, so that the members of items are swept too.
      const minLength = Math.max(s.minItems ?? 0, ctx.everyMember && (s.maxItems ?? 1) > 0 ? 1 : 0);
      const maxLength = Math.max(
        minLength,
        Math.min(s.maxItems ?? minLength + ARRAY_CAP, minLength + ARRAY_CAP),
      );
      return fc.array(valueArb(s.items, ctx, name, depth + 1), { minLength, maxLength });
    }
    case 'object':
      return objectArb(s, ctx, depth);
    default:
      return freeValue;
  }
}

function objectArb(s: JsonSchema, ctx: GenContext, depth: number): fc.Arbitrary<unknown> {
  if (depth > MAX_DEPTH) return fc.constant({});
  const props = s.properties ?? {};
  const keys = Object.keys(props);
  if (keys.length === 0) {
    if (s.additionalProperties && typeof s.additionalProperties === 'object')
      return fc.dictionary(
        fc.string({ minLength: 1, maxLength: 12 }),
        valueArb(s.additionalProperties, ctx, undefined, depth + 1),
        {
          maxKeys: 3,
        },
      );
    return s.additionalProperties === false ? fc.constant({}) : freeObject;
  }
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  for (const key of keys) model[key] = valueArb(props[key], ctx, key, depth + 1);
  const required = ctx.everyMember ? keys : (s.required ?? []).filter((k) => k in props);
  return fc.record(model, { requiredKeys: required });
}

// ---------------------------------------------------------------------------------------------------------------
// Mutations

/** A body: a JSON value (possibly holding Raw markers), what was done to it, and whether it must be refused. */
export interface BodyCase {
  value: unknown;
  note: string;
  /**
   * Set when the API conventions (docs/dashboard-developers.md) say the request must not succeed (an overflowing
   * number, NUL, invalid UTF-8…).
   */
  mustRefuse?: string;
  /** Set when the value breaks the document's schema (a wrong type, a length over the maximum…). */
  violates?: string;
}

/** A place in a generated value and the (resolved) schema that governs it. */
export interface Location {
  path: PathKey[];
  name?: string;
  schema: JsonSchema;
  required: boolean;
  present: boolean;
}

/** Every place of `value` the schema describes, present or not (absent optional members can be set). */
export function locations(schema: JsonSchema | undefined, value: unknown, ctx: GenContext): Location[] {
  const out: Location[] = [];
  const walk = (
    sch: JsonSchema | undefined,
    v: unknown,
    path: PathKey[],
    name: string | undefined,
    required: boolean,
    present: boolean,
    depth: number,
  ) => {
    const s = ctx.resolver.resolve(sch);
    out.push({ path, name, schema: s, required, present });
    if (!present || depth > MAX_DEPTH) return;
    if (s.properties && v && typeof v === 'object' && !Array.isArray(v)) {
      const req = new Set(s.required ?? []);
      for (const [key, propSchema] of Object.entries(s.properties)) {
        walk(
          propSchema,
          (v as Record<string, unknown>)[key],
          [...path, key],
          key,
          req.has(key),
          key in v,
          depth + 1,
        );
      }
    } else if (Array.isArray(v) && s.items) {
      v.forEach((item, i) => walk(s.items, item, [...path, i], name, true, true, depth + 1));
    }
  };
  walk(schema, value, [], undefined, true, true, 0);
  return out;
}

const WRONG_TYPE_SAMPLES: [string, unknown][] = [
  ['string', 'fuzz'],
  ['number', 12.5],
  ['integer', 7],
  ['boolean', true],
  ['array', [1, 'two']],
  ['object', { fuzz: 1 }],
];

function allows(types: string[] | undefined, t: string): boolean {
  if (!types) return true;
  if (types.includes(t)) return true;
  return t === 'integer' && types.includes('number');
}

/** Values of the wrong type for a schema. */
export function wrongTypeValues(s: JsonSchema): unknown[] {
  const types = schemaTypes(s);
  if (!types) return [];
  return WRONG_TYPE_SAMPLES.filter(([t]) => !allows(types, t)).map(([, v]) => v);
}

const overflow = () => fc.constantFrom(Raw.text('1e309'), Raw.text('-1e309'), Raw.text('123e99999'));
const hostileStrings = fc.constantFrom(
  { v: 'a\u0000b', note: 'a NUL character', refuse: 'a NUL character in a JSON string' },
  { v: '\u0000', note: 'only a NUL character', refuse: 'a NUL character in a JSON string' },
  { v: 'x\ud800', note: 'a lone high surrogate', refuse: 'an unpaired surrogate in a JSON string: \\ud800' },
  { v: '\udfff', note: 'a lone low surrogate', refuse: 'an unpaired surrogate in a JSON string: \\udfff' },
  { v: '\u202e\u200b\ufeff', note: 'bidi and zero-width characters', refuse: undefined },
  { v: "'; DROP TABLE users; --", note: 'SQL metacharacters', refuse: undefined },
  { v: '%s%n%x{{7*7}}${7*7}', note: 'format and template metacharacters', refuse: undefined },
  { v: '../../../../etc/passwd', note: 'a path traversal', refuse: undefined },
  { v: '\ud83d\ude00'.repeat(300), note: 'astral characters', refuse: undefined },
);
const invalidUtf8 = fc.constantFrom(
  ['"a\xff\xfeb"', 'bytes FF FE'],
  ['"\xc0\xaf"', 'an overlong encoding C0 AF'],
  ['"\xe2\x82"', 'a truncated sequence E2 82'],
  ['"\xed\xa0\x80"', 'a UTF-8-encoded surrogate ED A0 80'],
  ['"\x80"', 'a lone continuation byte 80'],
);

/** Deeply nested arrays or objects (`levels` levels) as JSON text (JSON.stringify would overflow the stack). */
export function deepJson(levels: number, kind: 'array' | 'object'): Raw {
  const text =
    kind === 'array'
      ? `${'['.repeat(levels)}1${']'.repeat(levels)}`
      : `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;
  return Raw.text(text, `${levels} levels of ${kind}s`);
}

/** An object with `keys` members `k0`, `k1`, … (compressible, so its reproducer stays short). */
export function wideObject(keys: number): Record<string, number> {
  const o: Record<string, number> = {};
  for (let i = 0; i < keys; i++) o[`k${i}`] = 0;
  return o;
}

/** The mutations that apply at one place of a valid value. */
function mutationsAt(root: unknown, loc: Location, ctx: GenContext): fc.Arbitrary<BodyCase>[] {
  const s = loc.schema;
  const where = pathText(loc.path);
  const put = (v: unknown) => setAt(root, loc.path, v);
  const out: fc.Arbitrary<BodyCase>[] = [];
  const types = schemaTypes(s);
  const isRoot = loc.path.length === 0;

  if (!isRoot) {
    const wrong = wrongTypeValues(s);
    if (wrong.length > 0 && !s.oneOf && !s.anyOf)
      out.push(
        fc.constantFrom(...wrong).map((v) => ({
          value: put(v),
          note: `${where}: wrong type ${jsonType(v)}`,
          violates: `${where} has a wrong type`,
        })),
      );
    if (types && !isNullable(s) && !s.oneOf && !s.anyOf)
      out.push(
        fc.constant({
          value: put(null),
          note: `${where}: null (not nullable)`,
          violates: `${where} is null`,
        }),
      );
    if (loc.required && loc.present && typeof loc.path[loc.path.length - 1] === 'string')
      out.push(
        fc.constant({
          value: put(undefined),
          note: `${where}: required member removed`,
          violates: `${where} is missing`,
        }),
      );
  } else if (types) {
    const wrong = wrongTypeValues(s);
    if (wrong.length > 0)
      out.push(
        fc.constantFrom(...wrong).map((v) => ({
          value: v,
          note: `body of the wrong type ${jsonType(v)}`,
          violates: 'the body has a wrong type',
        })),
      );
  }

  if (types?.includes('string') && !s.enum) {
    if (s.maxLength !== undefined) {
      const n = s.maxLength;
      out.push(fc.constant({ value: put('m'.repeat(n)), note: `${where}: ${n} characters (maxLength)` }));
      out.push(
        fc.constant({
          value: put('m'.repeat(n + 1)),
          note: `${where}: ${n + 1} characters (maxLength + 1)`,
          violates: `${where} is longer than ${n}`,
        }),
      );
      out.push(
        fc.constant({
          value: put('\u00e9'.repeat(n)),
          note: `${where}: ${n} two-byte characters (maxLength)`,
        }),
      );
    } else {
      out.push(
        fc.constant({ value: put('L'.repeat(100_000)), note: `${where}: 100,000 characters (no maxLength)` }),
      );
    }
    if (s.minLength !== undefined && s.minLength > 0) {
      const n = s.minLength;
      out.push(fc.constant({ value: put('m'.repeat(n)), note: `${where}: ${n} characters (minLength)` }));
      out.push(
        fc.constant({
          value: put('m'.repeat(n - 1)),
          note: `${where}: ${n - 1} characters (minLength - 1)`,
          violates: `${where} is shorter than ${n}`,
        }),
      );
    }
    if (s.pattern) {
      out.push(
        fc.constantFrom('ZZZ!', '', ' ').map((v) => ({
          value: put(v),
          note: `${where}: ${JSON.stringify(v)} (does not match ${s.pattern})`,
          violates: `${where} does not match its pattern`,
        })),
      );
    }
    if (s.pattern === ID_PATTERN || /(^id|Id)$/.test(loc.name ?? '')) {
      out.push(hex24.map((v) => ({ value: put(v), note: `${where}: ${v} (a well-formed id of nothing)` })));
      out.push(
        fc
          .constantFrom('0'.repeat(23), 'f'.repeat(25), 'G'.repeat(24), 'ABCDEF0123456789ABCDEF01')
          .map((v) => ({ value: put(v), note: `${where}: ${v} (malformed id)` })),
      );
    }
    if (s.format === 'email') {
      out.push(
        fc
          .constantFrom(
            'no-at-sign',
            'a@',
            '@b.co',
            `${'a'.repeat(300)}@example.com`,
            'A@EXAMPLE.COM',
            ' a@b.co ',
          )
          .map((v) => ({ value: put(v), note: `${where}: ${JSON.stringify(v.slice(0, 40))} (e-mail edge)` })),
      );
    }
    out.push(
      hostileStrings.map((h) => ({ value: put(h.v), note: `${where}: ${h.note}`, mustRefuse: h.refuse })),
    );
    out.push(
      invalidUtf8.map(([bytes, label]) => ({
        value: put(Raw.text(bytes, label)),
        note: `${where}: invalid UTF-8 (${label})`,
        mustRefuse: `invalid UTF-8 in the JSON body: ${label}`,
      })),
    );
  }
  if (s.enum && s.enum.length > 0) {
    const first = s.enum.find((e) => typeof e === 'string') as string | undefined;
    const bad = [
      '__fuzz__',
      ...(first
        ? [first.toUpperCase() === first ? first.toLowerCase() : first.toUpperCase(), ` ${first}`]
        : []),
    ].filter((v) => !s.enum!.includes(v));
    if (bad.length > 0)
      out.push(
        fc.constantFrom(...bad).map((v) => ({
          value: put(v),
          note: `${where}: ${JSON.stringify(v)} (not in the enum)`,
          violates: `${where} is not in its enum`,
        })),
      );
  }
  if ((types?.includes('number') || types?.includes('integer')) && !s.enum) {
    const integer = !types.includes('number');
    const step = integer ? 1 : 0.5;
    const edges: [number, string, boolean][] = [];
    if (s.minimum !== undefined)
      edges.push([s.minimum, 'minimum', false], [s.minimum - step, 'minimum - ' + step, true]);
    if (s.maximum !== undefined)
      edges.push([s.maximum, 'maximum', false], [s.maximum + step, 'maximum + ' + step, true]);
    edges.push(
      [Number.MAX_SAFE_INTEGER + 2, '2^53 + 1', s.maximum !== undefined],
      [-1e308, '-1e308', s.minimum !== undefined],
      [Number.MIN_VALUE, '5e-324', integer || (s.minimum ?? 0) > 0],
    );
    if (integer) edges.push([1.5, 'a fraction', true]);
    out.push(
      fc.constantFrom(...edges).map(([v, label, bad]) => ({
        value: put(v),
        note: `${where}: ${v} (${label})`,
        violates: bad ? `${where} is out of range` : undefined,
      })),
    );
    out.push(
      overflow().map((r) => ({
        value: put(r),
        note: `${where}: ${r.label} (overflows a double)`,
        mustRefuse: `a number that overflows a double in the JSON body: ${r.label}`,
      })),
    );
    out.push(
      fc.constantFrom('12', '1e2', 'NaN').map((v) => ({
        value: put(v),
        note: `${where}: the string ${JSON.stringify(v)}`,
        violates: `${where} is a string`,
      })),
    );
  }
  if (types?.includes('array')) {
    const items = ctx.resolver.resolve(s.items);
    const fill = (n: number) => fc.array(valueArb(items, ctx, loc.name), { minLength: n, maxLength: n });
    if (s.maxItems !== undefined) {
      const n = s.maxItems;
      out.push(fill(n).map((v) => ({ value: put(v), note: `${where}: ${n} items (maxItems)` })));
      out.push(
        fill(n + 1).map((v) => ({
          value: put(v),
          note: `${where}: ${n + 1} items (maxItems + 1)`,
          violates: `${where} has more than ${n} items`,
        })),
      );
    } else {
      out.push(
        fc.constant({ value: put(new Array(10_000).fill(0)), note: `${where}: 10,000 items (no maxItems)` }),
      );
    }
    if (s.minItems !== undefined && s.minItems > 0) {
      out.push(
        fill(s.minItems - 1).map((v) => ({
          value: put(v),
          note: `${where}: ${s.minItems! - 1} items (minItems - 1)`,
          violates: `${where} has fewer than ${s.minItems} items`,
        })),
      );
    }
    out.push(fc.constant({ value: put([]), note: `${where}: empty array` }));
  }
  if (types?.includes('object') && loc.present) {
    const current = getAt(root, loc.path);
    if (current && typeof current === 'object' && !Array.isArray(current)) {
      const withMember = (key: string, v: unknown) => put({ ...(current as object), [key]: v });
      if (isFreeForm(s)) {
        out.push(
          overflow().map((r) => ({
            value: withMember('fuzzNumber', r),
            note: `${where}.fuzzNumber: ${r.label} in a free-form object`,
            mustRefuse: `a number that overflows a double in the JSON body: ${r.label}`,
          })),
        );
        out.push(
          fc.constantFrom(65, 100).map((n) => ({
            value: withMember('deep', deepJson(n, 'object')),
            note: `${where}.deep: ${n} levels of nesting in a free-form object`,
          })),
        );
        out.push(
          fc.constant({
            value: withMember('wide', wideObject(2000)),
            note: `${where}.wide: 2,000 members in a free-form object`,
          }),
        );
        out.push(
          fc.constant({
            value: withMember('big', 'B'.repeat(200_000)),
            note: `${where}.big: a 200,000-character string in a free-form object`,
          }),
        );
        out.push(
          fc.constant({
            value: withMember('', { '': null }),
            note: `${where}: empty keys in a free-form object`,
          }),
        );
      } else {
        out.push(
          fc
            .constantFrom('fuzzUnknown', 'constructor', 'toString', 'hasOwnProperty')
            .map((k) => ({ value: withMember(k, 'x'), note: `${where}: unknown member ${k}` })),
        );
      }
    }
  }
  return out;
}

/**
 * Mostly-valid bodies: a valid value with exactly one mutation (or none, now and then). `example` is a body the
 * service accepted (the fuzzer's own set-up request), used as the valid value two times in three: a schema rarely
 * says everything a handler wants (a policy's conditions must name known fields), and mutations of a body that
 * passes validation reach the handler.
 */
export function bodyCaseArb(
  schema: JsonSchema | undefined,
  ctx: GenContext,
  example?: unknown,
): fc.Arbitrary<BodyCase> {
  return withExample(valueArb(schema, ctx), example).chain((valid) => {
    const muts = locations(schema, valid, ctx).flatMap((loc) => mutationsAt(valid, loc, ctx));
    const unchanged = fc.constant<BodyCase>({ value: cloneJson(valid), note: 'valid body' });
    return muts.length === 0
      ? unchanged
      : fc.oneof({ arbitrary: unchanged, weight: 1 }, { arbitrary: fc.oneof(...muts), weight: 6 });
  });
}

/** Whether the schema lets a value be null: declared nullable, a nullable branch, or no type at all. */
export function acceptsNull(schema: JsonSchema | undefined, ctx: GenContext): boolean {
  const s = ctx.resolver.resolve(schema);
  const branches = s.oneOf ?? s.anyOf;
  if (branches && branches.length > 0) return branches.some((b) => acceptsNull(b, ctx));
  if (s.const !== undefined) return s.const === null;
  return schemaTypes(s) === undefined || isNullable(s);
}

/**
 * `value` with, in each object on the way to `path`, only the schema's required members and the one the path goes
 * through: a generated optional sibling that a handler would refuse then cannot hide what the member at `path`
 * does (a body `{"name": null}` reaches the validator alone, as a client sends it).
 */
function keepOnlyPath(
  value: unknown,
  schema: JsonSchema | undefined,
  path: PathKey[],
  ctx: GenContext,
): unknown {
  if (path.length === 0 || value === null || typeof value !== 'object') return value;
  const s = ctx.resolver.resolve(schema);
  const [key, ...rest] = path;
  if (Array.isArray(value)) {
    if (typeof key !== 'number') return value;
    const copy = [...(value as unknown[])];
    copy[key] = keepOnlyPath(copy[key], s.items, rest, ctx);
    return copy;
  }
  const o = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const k of s.required ?? []) if (k in o) out[k] = o[k];
  if (typeof key === 'string' && key in o) out[key] = keepOnlyPath(o[key], s.properties?.[key], rest, ctx);
  return out;
}

/**
 * The null sweep: one body per member the schema declares (required or optional, present or not, at any depth
 * of the base value), that member `null` and the rest valid. Random mutations put null in one place among dozens
 * of mutations, so an update DTO whose optional NOT NULL member let null through to the database went unseen;
 * the sweep sends every one. The base is the operation's accepted example when there is one (kept whole: it passes
 * validation), else a generated value with every member present, cut down to the required members on the way.
 * A null in a member not declared nullable breaks the schema (`violates`): it must be refused.
 */
export function nullMemberCasesArb(
  schema: JsonSchema | undefined,
  ctx: GenContext,
  example?: unknown,
): fc.Arbitrary<BodyCase[]> {
  const base =
    example !== undefined ? fc.constant(cloneJson(example)) : valueArb(schema, { ...ctx, everyMember: true });
  return base.map((valid) =>
    locations(schema, valid, ctx)
      .filter((loc) => typeof loc.path[loc.path.length - 1] === 'string')
      .map((loc): BodyCase => {
        const where = pathText(loc.path);
        const around = example !== undefined ? valid : keepOnlyPath(valid, schema, loc.path, ctx);
        const nullable = acceptsNull(loc.schema, ctx);
        return {
          value: setAt(around, loc.path, null),
          note: `${where}: null (null sweep, ${nullable ? 'nullable' : 'not nullable'})`,
          violates: nullable ? undefined : `${where} is null`,
        };
      }),
  );
}

/** Valid values, or (two times in three) a known-good example. */
export function withExample(arb: fc.Arbitrary<unknown>, example: unknown): fc.Arbitrary<unknown> {
  return example === undefined
    ? arb
    : fc.oneof({ arbitrary: arb, weight: 1 }, { arbitrary: fc.constant(example).map(cloneJson), weight: 2 });
}

/** Whether `value` (a query, header or path value as text) breaks the parameter schema. */
export function violatesParam(
  schema: JsonSchema | undefined,
  text: string | string[],
  ctx: GenContext,
): string | undefined {
  const s = ctx.resolver.resolve(schema);
  const types = schemaTypes(s) ?? [];
  if (Array.isArray(text)) {
    if (!types.includes('array')) return `given ${text.length} times, the schema allows one value`;
    for (const t of text) {
      const v = violatesParam(s.items, t, ctx);
      if (v) return v;
    }
    return undefined;
  }
  if (s.enum && !s.enum.map(String).includes(text))
    return `${JSON.stringify(text)} is not one of ${s.enum.join(', ')}`;
  if ((types.includes('number') || types.includes('integer')) && !types.includes('string')) {
    const n = text.trim() === '' ? NaN : Number(text);
    if (!Number.isFinite(n)) return `${JSON.stringify(text.slice(0, 40))} is not a number`;
    if (types.includes('integer') && !types.includes('number') && !Number.isInteger(n))
      return `${text} is not an integer`;
    if (s.minimum !== undefined && n < s.minimum) return `${text} is below the minimum ${s.minimum}`;
    if (s.maximum !== undefined && n > s.maximum) return `${text} is above the maximum ${s.maximum}`;
  }
  if (types.includes('string') || types.length === 0) {
    if (s.pattern) {
      try {
        if (!new RegExp(s.pattern, 'u').test(text))
          return `${JSON.stringify(text.slice(0, 40))} does not match ${s.pattern}`;
      } catch {
        /* an unsupported pattern: not checked */
      }
    }
    if (s.maxLength !== undefined && [...text].length > s.maxLength) return `longer than ${s.maxLength}`;
    if (s.minLength !== undefined && [...text].length < s.minLength) return `shorter than ${s.minLength}`;
    if (s.format === 'date-time' && Number.isNaN(Date.parse(text)))
      return `${JSON.stringify(text.slice(0, 40))} is not a date-time`;
  }
  return undefined;
}

/** A valid parameter value, as text (numbers and booleans as JSON writes them). */
export function paramTextArb(
  schema: JsonSchema | undefined,
  ctx: GenContext,
  name: string,
): fc.Arbitrary<string> {
  // Objects go through JSON, never String(): under an untyped schema (`{}`) they may carry members such as
  // `toString` or `valueOf` that make String() throw.
  const text = (v: unknown): string =>
    typeof v === 'string'
      ? v
      : v === null || v === undefined
        ? ''
        : typeof v === 'object'
          ? JSON.stringify(v)
          : String(v);
  const item = (v: unknown) => (v !== null && typeof v === 'object' ? JSON.stringify(v) : String(v));
  return valueArb(schema, ctx, name).map((v) => (Array.isArray(v) ? v.map(item).join(',') : text(v)));
}
